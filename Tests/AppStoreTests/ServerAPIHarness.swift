import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation
import Synchronization

/// A simulated App Store and a Server API client pointed at it, with what the client reported.
struct ServerAPIHarness {
    static let bundle = "com.example.depot"

    let store: SimulatedAppStore
    let client: ServerAPIClient
    /// `endpoint outcome` of every exchange the client made.
    let outcomes: Lines

    var api: SimulatedServerAPI { store.serverAPI }

    /// Runs `body` with a started store and a client (short backoff, so retries are quick).
    static func run(allowSandbox: Bool = true, timeout: Double = 5, appAppleID: Int64? = nil, storeAppAppleID: Int64 = 1_234_567_890,
                    configure: (inout ServerAPIConfiguration) -> Void = { _ in },
                    _ body: (ServerAPIHarness) async throws -> Void) async throws {
        let store = try SimulatedAppStore(bundleID: bundle, appAppleID: storeAppAppleID)
        var configuration = ServerAPIConfiguration(productionURL: store.apiURL, sandboxURL: store.apiSandboxURL, bundleID: bundle,
                                                   appAppleID: appAppleID, allowSandbox: allowSandbox, timeout: timeout)
        configuration.retryBackoff = 0.01
        configure(&configuration)
        let key = store.serverAPI.key
        let verifier = SignedDataVerifier(trustedRoots: [store.serverAPI.pki.root], bundleID: bundle, allowSandbox: allowSandbox,
                                          appAppleID: appAppleID)
        let outcomes = Lines()
        let client = ServerAPIClient(configuration: configuration,
                                     key: try ServerAPIKey(keyID: key.keyID, issuerID: key.issuerID, privateKey: key.privateKey),
                                     verifier: verifier, observer: { endpoint, outcome, _ in outcomes.append("\(endpoint) \(outcome)") })
        do {
            try await body(ServerAPIHarness(store: store, client: client, outcomes: outcomes))
        } catch {
            await store.stop()
            throw error
        }
        await store.stop()
    }
}

/// Lines collected from several threads.
final class Lines: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var list: [String] { storage.withLock { $0 } }
}

extension Result {
    /// The failure, or nil.
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

extension ServerAPIFailure {
    /// The kind without the details.
    var kind: String {
        switch self {
        case .invalid: "invalid"
        case .unavailable: "unavailable"
        case .misconfigured: "misconfigured"
        }
    }
}
