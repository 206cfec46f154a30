import DepotTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 11, missing piece 1 (operations.md §4): `depot simulator` runs the simulated App Store and prints the
/// `depot serve` options that point at it; `depot simulator receipt` mints purchases it accepts; a server started
/// with those options grants them.
@Suite("Trying purchases without the App Store")
struct SimulatorCommandTests {
    static var depot: String { ProcessRunner.depotExecutable }

    static func post(port: Int, _ path: String, json: String) async throws -> RawResponse {
        let raw = "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n" + json
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(raw)
            return try connection.readResponse()
        }
    }

    static func port(_ line: String?) throws -> Int {
        try #require(line.flatMap { URL(string: String($0.dropFirst("listening on ".count)))?.port }, "\(line ?? "no line")")
    }

    static func metrics(port: Int) async throws -> String {
        try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            return try connection.readResponse().text
        }
    }

    @Test func aServerStartedAgainstTheSimulatorGrantsItsReceiptsAndTransactions() async throws {
        let tree = try await CommandLineServeTests.sampleTree()
        let simulator = try ChildProcess(Self.depot, ["simulator", "--port", "0"], directory: tree.path)
        let listening = await simulator.line(timeout: 30) { $0.hasPrefix("listening on http://127.0.0.1:") }
        let simulatorURL = String(try #require(listening, "\(simulator.output.stderrText)").dropFirst("listening on ".count))
        let lines = simulator.output.stdoutLines
        // The serve options, one per line, in this order, then the address.
        try #require(lines.count == 11, "\(lines)")
        #expect(lines[0] == "--apple-verify-url \(simulatorURL)/verifyReceipt")
        #expect(lines[1] == "--apple-sandbox-verify-url \(simulatorURL)/sandbox/verifyReceipt")
        let rootLine = "--apple-root-certs " + tree.path + "/var/simulator/root.pem"
        #expect(lines[2] == rootLine)
        let root = try await ChildProcess.run(Self.depot, ["simulator", "root"], directory: tree.path)
        #expect(root.status == 0 && root.stdout == tree.path + "/var/simulator/root.pem\n", "\(root.stdout)")
        // The App Store Server API: an In-App Purchase key kept beside the PKI, as App Store Connect hands it out.
        let keyID = String(lines[4].dropFirst("--apple-api-key-id ".count))
        #expect(lines[4].hasPrefix("--apple-api-key-id ") && keyID.count == 10, "\(lines[4])")
        let keyFile = tree.path + "/var/simulator/SubscriptionKey_\(keyID).p8"
        #expect(lines[3] == "--apple-api-key " + keyFile)
        let pem = try String(contentsOfFile: keyFile, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"), "PKCS#8 PEM")
        let permissions = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        #expect(lines[5].hasPrefix("--apple-api-issuer ") && UUID(uuidString: String(lines[5].dropFirst("--apple-api-issuer ".count))) != nil,
                "\(lines[5])")
        #expect(lines[6] == "--apple-api-url \(simulatorURL)")
        #expect(lines[7] == "--apple-api-sandbox-url \(simulatorURL)/sandbox")
        #expect(lines[8] == "--apple-app-id 1234567890")
        #expect(lines[9] == "--bundle-id com.example.depot")

        // Exactly the printed options: with the key, `auto` validates receipts through the Server API.
        let options = lines.dropLast().flatMap { $0.split(separator: " ", maxSplits: 1).map(String.init) }
        let serve = try ChildProcess(Self.depot, ["serve", "--port", "0", "--loops", "1"] + options, directory: tree.path)
        let port = try Self.port(await serve.line(timeout: 30) { $0.hasPrefix("listening on") })

        func mint(_ extra: [String]) async throws -> String {
            let result = try await ChildProcess.run(Self.depot, ["simulator", "receipt", "--simulator", simulatorURL] + extra, directory: tree.path)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count == 1, "the purchase alone on stdout")
            return result.stdout.trimmingCharacters(in: .newlines)
        }
        for environment in ["Production", "sandbox"] {
            let receipt = try await mint(["--product", "com.example.depot.level2", "--environment", environment])
            let answer = try await Self.post(port: port, "/v1/receipts", json: "{\"receipt\": \"\(receipt)\", \"account\": \"qa-1\"}")
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.text.contains("\"pack\": \"level2\""), "\(answer.text)")
            #expect(answer.text.contains(environment == "Production" ? "\"environment\": \"Production\"" : "\"environment\": \"Sandbox\""))
        }
        // Both went through Get Transaction History (the sandbox one after production's 4040010), none to verifyReceipt,
        // and the simulator refused no token.
        let metrics = try await Self.metrics(port: port)
        #expect(metrics.contains("depot_apple_api_requests_total{endpoint=\"transaction_history\",outcome=\"http_200\"} 2\n"), "\(metrics)")
        #expect(metrics.contains("depot_apple_api_requests_total{endpoint=\"transaction_history\",outcome=\"http_404_4040010\"} 1\n"))
        #expect(!metrics.contains("depot_apple_requests_total{"), "no verifyReceipt call")
        #expect(!metrics.contains("outcome=\"http_401\""), "\(metrics)")
        let transaction = try await mint(["--product", "com.example.depot.level2", "--transaction"])
        #expect(transaction.split(separator: ".").count == 3, "a compact JWS")
        let signed = try await Self.post(port: port, "/v1/receipts", json: "{\"transactions\": [\"\(transaction)\"]}")
        #expect(signed.status == 200 && signed.text.contains("\"pack\": \"level2\""), "\(signed.text)")
        // The Server API knows the minted transaction: a restore from it finds the customer's history.
        let restored = try await Self.post(port: port, "/v1/receipts", json: "{\"transactions\": [\"\(transaction)\"], \"history\": true}")
        #expect(restored.status == 200 && restored.text.contains("\"pack\": \"level2\""), "\(restored.text)")
        let subscription = try await mint(["--product", "com.example.depot.seasonpass", "--transaction", "--expires-in", "3600"])
        let season = try await Self.post(port: port, "/v1/receipts", json: "{\"transactions\": [\"\(subscription)\"]}")
        #expect(season.status == 200 && season.text.contains("\"pack\": \"level3\""), "\(season.text)")

        // And the reference client, end to end.
        let receipt = try await mint(["--product", "com.example.depot.level2"])
        try Data(receipt.utf8).write(to: URL(fileURLWithPath: tree.path + "/receipt.txt"))
        let fetched = try await ChildProcess.run(Self.depot, ["fetch", "--server", "http://127.0.0.1:\(port)", "--receipt", "receipt.txt",
                                                              "--pack", "level2", "--out", "level2"], directory: tree.path)
        #expect(fetched.status == 0 && fetched.stdout.contains("done: 3 files"), "\(fetched.stdout)\(fetched.stderr)")

        // A receipt the simulator never issued is not valid.
        let forged = try await Self.post(port: port, "/v1/receipts", json: "{\"receipt\": \"eyJzaW11bGF0ZWQtcmVjZWlwdCI6Im5vIn0=\"}")
        #expect(forged.status == 422)
        #expect(await serve.stop().status == 0)

        // A server that keeps receipts on verifyReceipt gets the same receipts granted there.
        let legacy = try ChildProcess(Self.depot, ["serve", "--port", "0", "--loops", "1", "--receipt-validation", "verify-receipt"] + options,
                                      directory: tree.path)
        let legacyPort = try Self.port(await legacy.line(timeout: 30) { $0.hasPrefix("listening on") })
        let legacyReceipt = try await mint(["--product", "com.example.depot.level2"])
        let legacyAnswer = try await Self.post(port: legacyPort, "/v1/receipts", json: "{\"receipt\": \"\(legacyReceipt)\"}")
        #expect(legacyAnswer.status == 200 && legacyAnswer.text.contains("\"pack\": \"level2\""), "\(legacyAnswer.text)")
        let legacyMetrics = try await Self.metrics(port: legacyPort)
        #expect(legacyMetrics.contains("depot_apple_requests_total{"), "\(legacyMetrics)")
        #expect(!legacyMetrics.contains("endpoint=\"transaction_history\""))
        #expect(await legacy.stop().status == 0)

        // Restarted, the simulator signs with the same root (a server keeps trusting it) and accepts the same key.
        let rootPEM = try String(contentsOfFile: tree.path + "/var/simulator/root.pem", encoding: .utf8)
        #expect(await simulator.stop().status == 0)
        let again = try ChildProcess(Self.depot, ["simulator", "--port", "0"], directory: tree.path)
        #expect(await again.line(timeout: 30) { $0.hasPrefix("listening on") } != nil)
        #expect(try String(contentsOfFile: tree.path + "/var/simulator/root.pem", encoding: .utf8) == rootPEM)
        #expect(Array(again.output.stdoutLines.prefix(6).dropFirst(2)) == Array(lines[2..<6]), "\(again.output.stdoutLines)")
        #expect(try String(contentsOfFile: keyFile, encoding: .utf8) == pem)
        await again.stop()
    }

    @Test func receiptWithoutASimulatorSaysWhereItLooked() async throws {
        let closed = try RefusingPort()
        let result = try await ChildProcess.run(Self.depot, ["simulator", "receipt", "--product", "p", "--simulator", "http://127.0.0.1:\(closed.port)"])
        #expect(result.status == 1 && result.stdout.isEmpty)
        #expect(result.stderr.contains("cannot reach the simulator at http://127.0.0.1:\(closed.port)"), "\(result.stderr)")
        let usage = try await ChildProcess.run(Self.depot, ["simulator", "receipt", "--product", "p", "--environment", "Xcode"])
        #expect(usage.status == 64)
    }
}
