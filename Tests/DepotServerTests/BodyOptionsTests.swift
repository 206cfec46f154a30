import DepotTestSupport
import Foundation
import Testing

/// `--body-budget` and `--body-min-rate` (and their `DEPOT_*` variables) reach the engine of a `depot serve`
/// child: a 1 MiB budget refuses a second large body with `503` before reading it, and a high minimum rate cuts
/// a body that the default rate would let through.
@Suite("Body budget and minimum rate options")
struct BodyOptionsTests {
    @Test func budgetAndRateComeFromTheOptions() async throws {
        let tree = TemporaryDirectory("body-options")
        try await TestDepot.copySample(into: tree.path)
        var environment = ProcessInfo.processInfo.environment
        environment["DEPOT_BODY_MIN_RATE"] = "100000"
        let arguments = ["serve", "--port", "0", "--access-log", "off", "--idle-timeout", "60", "--body-budget", "1",
                         "--catalog", tree.path + "/catalog", "--content", tree.path + "/content", "--data", tree.path + "/var"]
        let child = try SpawnedChild.start(ProcessRunner.depotExecutable, arguments, environment: environment)
        // Killed, not stopped: nothing of it is checked after the test, and the reap is then immediate.
        defer { child.send(SIGKILL); child.waitForExit() }
        var line = ""
        while !line.contains("\n"), let data = try child.output.read(upToCount: 1), !data.isEmpty {
            line += String(decoding: data, as: UTF8.self)
        }
        let port = try #require(Int(line.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").last ?? ""))

        let head = "POST /v1/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 700000\r\n"
        let (second, first) = try await OffPool.run { () throws -> (RawResponse, String) in
            // The first body is admitted (700,000 of the 1 MiB budget): the 100 Continue says so.
            let first = try RawHTTPConnection(port: port)
            first.send(head + "Expect: 100-continue\r\n\r\n")
            let admitted = try first.readResponse(timeout: 30)
            guard admitted.status == 100 else { throw RawHTTPConnection.Failure(description: "first body: \(admitted.status)") }
            // The second does not fit beside it.
            let second = try RawHTTPConnection(port: port)
            second.send(head + "\r\n")
            let refused = try second.readResponse(timeout: 30)
            // The first trickles, 2 KiB every 100 ms or slower: faster than the default minimum rate (1,024 B/s,
            // so the whole body would arrive and be answered 400), far slower than the 100,000 B/s asked for.
            var sent = 0
            var answer: [UInt8] = []
            while answer.isEmpty, sent < 700_000 {
                if let piece = first.readSome(timeout: 0.1), !piece.isEmpty {
                    answer = piece
                } else {
                    let size = min(2048, 700_000 - sent)
                    guard first.send(Array(repeating: UInt8(ascii: " "), count: size)) else { break }
                    sent += size
                }
            }
            answer += first.readUntilClose(timeout: 30).bytes
            return (refused, String(decoding: answer, as: UTF8.self))
        }
        #expect(second.status == 503)
        #expect(second.header("retry-after") != nil)
        #expect(String(decoding: second.body, as: UTF8.self).contains("\"unavailable\""))
        #expect(first.hasPrefix("HTTP/1.1 408 "), "\(first.prefix(300))")
        #expect(first.contains("\"request_timeout\""))
    }
}
