import AppStoreSimulator
import ArgumentParsing
import DepotServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `depot simulator`: the simulated App Store of the tests and `depot demo`, on loopback, for trying purchases
/// against a development server (operations.md §4).
struct SimulatorCommand: Command {
    static let name = "simulator"
    static let synopsis: String? = "[--host H] [--port P] [--data DIR] [--bundle-id ID]"
    static let summary = "Run the simulated App Store and print the depot serve options that point at it."
    static let defaultPort = 8090
    static let defaultURL = "http://127.0.0.1:\(defaultPort)"

    @Option("host", .nonEmptyText, help: "listen address", valueName: "ADDRESS")
    var host = "127.0.0.1"
    @Option("port", .integer(in: 0...65535), help: "listen port; `0` picks a free one", valueName: "PORT")
    var port = defaultPort
    @OptionGroup(only: "data", "bundle-id") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        ShutdownSignal.install()
        let directory = SimulatorFiles.directory(data: configuration.dataDirectory)
        let pki: TestPKI
        do { pki = try TestPKI.stored(in: directory) } catch { throw CommandFailure("the simulator's certificates: \(error)") }
        let key: SimulatedAPIKey
        do { key = try SimulatedAPIKey.stored(in: directory) } catch { throw CommandFailure("the simulator's In-App Purchase key: \(error)") }
        let store: SimulatedAppStore
        do {
            store = try SimulatedAppStore(bundleID: configuration.bundleID, pki: pki, host: host, port: port)
        } catch {
            throw CommandFailure("cannot listen on \(host):\(port): \(error)")
        }
        store.serverAPI.accept(key)
        for option in Self.serveOptions(store, rootFile: directory + "/" + TestPKI.FileName.root, key: key,
                                        keyFile: key.keyFilePath(in: directory)) { say(option) }
        say("listening on \(store.baseURL.absoluteString)")
        let signal = await ShutdownSignal.wait()
        FileHandle.standardError.write(Data("depot: \(signal), stopping the simulator\n".utf8))
        await store.stop()
        return 0
    }

    /// The `depot serve` options that point a server at `store`, one per line: `verifyReceipt`, the root of its
    /// signed data, and the App Store Server API with `key` (its `.p8` at `keyFile`), the app's Apple ID and bundle ID
    /// that the store's answers carry and its token check wants.
    static func serveOptions(_ store: SimulatedAppStore, rootFile: String, key: SimulatedAPIKey, keyFile: String) -> [String] {
        [
            "--apple-verify-url \(store.productionURL.absoluteString)",
            "--apple-sandbox-verify-url \(store.sandboxURL.absoluteString)",
            // StoreKit 2 transactions and everything the Server API answers are signed by this root.
            "--apple-root-certs \(rootFile)",
            "--apple-api-key \(keyFile)",
            "--apple-api-key-id \(key.keyID)",
            "--apple-api-issuer \(key.issuerID)",
            "--apple-api-url \(store.apiURL.absoluteString)",
            "--apple-api-sandbox-url \(store.apiSandboxURL.absoluteString)",
            "--apple-app-id \(store.serverAPI.appAppleID)",
            "--bundle-id \(store.bundleID)",
        ]
    }
}

/// `depot simulator receipt`: a purchase the running simulator accepts, on stdout alone.
struct SimulatorReceiptCommand: Command {
    static let name = "receipt"
    static let synopsis: String? = "--product ID [--environment Production|Sandbox] [--simulator URL] [--transaction] [--expires-in S]"
    static let summary = "Print a base64 receipt (or, with --transaction, a signed StoreKit 2 transaction) the simulator accepts."

    @Option("product", help: "App Store product ID", valueName: "ID")
    var product: String
    @Option("environment", help: "where the purchase was made")
    var environment = SimulatedEnvironment.production
    @Option("simulator", .serverURL, help: "the running simulator", defaultText: SimulatorCommand.defaultURL)
    var simulator = URL(string: SimulatorCommand.defaultURL)!
    @Option("transaction", help: "print a signed StoreKit 2 transaction (JWS) instead of a receipt")
    var transaction = false
    @Option("expires-in", .integer(in: 1...(86_400 * 3650)), help: "a subscription that expires after this many seconds",
            valueName: "SECONDS")
    var expiresIn: Int?

    func run() async throws -> Int32 {
        var body: [String: Any] = ["productId": product, "environment": environment.rawValue]
        if let expiresIn { body["expiresInSeconds"] = expiresIn }
        var request = URLRequest(url: simulator.appendingPathComponent(SimulatedAppStore.mintingPrefix + (transaction ? "transactions" : "receipts")))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw CommandFailure("cannot reach the simulator at \(simulator.absoluteString) (is `depot simulator` running?): \(error.localizedDescription)")
        }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard (response as? HTTPURLResponse)?.statusCode == 201,
              let value = object?[transaction ? "signedTransaction" : "receipt"] as? String else {
            let message = ((object?["error"] as? [String: Any])?["message"] as? String) ?? String(decoding: data.prefix(200), as: UTF8.self)
            throw CommandFailure("the simulator refused: \(message)")
        }
        say(value)
        return 0
    }
}

/// `depot simulator root`: where the simulator's root certificate is, for `--apple-root-certs`.
struct SimulatorRootCommand: Command {
    static let name = "root"
    static let synopsis: String? = "[--data DIR]"
    static let summary = "Print the path of the simulator's root certificate (for --apple-root-certs)."

    @OptionGroup(only: "data") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let directory = SimulatorFiles.directory(data: configuration.dataDirectory)
        do { _ = try TestPKI.stored(in: directory) } catch { throw CommandFailure("the simulator's certificates: \(error)") }
        say(directory + "/" + TestPKI.FileName.root)
        return 0
    }
}

/// `Production` or `Sandbox` (`--environment`), in any case.
enum SimulatedEnvironment: String, Sendable, CaseIterable, EnumeratedOption {
    case production = "Production"
    case sandbox = "Sandbox"

    static func matching(_ text: String) -> SimulatedEnvironment? {
        allCases.first { $0.rawValue.lowercased() == text.lowercased() }
    }
}

/// Where the simulator keeps its certificates and keys (the PKI, the In-App Purchase key): `<data>/simulator`, as an absolute path.
enum SimulatorFiles {
    static func directory(data: String) -> String {
        let absolute = data.hasPrefix("/") ? data : FileManager.default.currentDirectoryPath + "/" + data
        return URL(fileURLWithPath: absolute).standardizedFileURL.path + "/simulator"
    }
}
