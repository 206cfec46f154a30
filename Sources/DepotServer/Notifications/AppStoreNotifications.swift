import AppStore
public import ArgumentParsing
import DepotCore
public import Foundation
package import Ledger
import Server

/// The notification commands, without a running server (`depot notifications sync|test`, spec
/// app-store-server-api §6): each builds the same verifier, API client and ledger as `depot serve` from the
/// configuration, and needs an In-App Purchase key.
public enum AppStoreNotifications {
    /// What Get Test Notification Status said in the end.
    public struct TestOutcome: Sendable {
        /// The environment asked.
        public var environment: String
        /// Whether an attempt to deliver the `TEST` notification succeeded.
        public var delivered: Bool
        /// Apple's attempts, as `(date, result)` in order (`SUCCESS`, `TIMED_OUT`, ...).
        public var attempts: [(date: Date, result: String)]
        /// Why no status could be had (the deadline passed, Apple refused); nil when Apple answered.
        public var problem: String?
    }

    /// Runs one notification catch-up over the ledger at `configuration` and returns what it did. With
    /// `since`, the window starts there and the stored window is left alone.
    public static func sync(_ configuration: DepotConfiguration, since: Date?, logger: Logger = Logger()) async throws -> NotificationSyncReport {
        _ = try makeClient(configuration)
        let ledger = try await DepotApp.openLedger(configuration)
        let sync = try notificationSync(configuration, ledger: ledger, logger: logger)
        let report = await Task(executorPreference: WorkerPool.shared) { await sync.syncOnce(since: since) }.value
        await ledger.close()
        logger.output.flush()
        return report
    }

    /// Asks Apple to send a `TEST` notification to the app's notification URL, then polls Get Test
    /// Notification Status every `interval` seconds until an attempt succeeded or `wait` seconds passed.
    public static func test(_ configuration: DepotConfiguration, sandbox: Bool, wait: Double,
                            interval: Double = 1) async throws -> TestOutcome {
        let (client, _) = try makeClient(configuration)
        let environment: AppStoreEnvironment = sandbox ? .sandbox : .production
        return await Task(executorPreference: WorkerPool.shared) { () -> TestOutcome in
            var outcome = TestOutcome(environment: environment.rawValue, delivered: false, attempts: [])
            let token: String
            switch await client.requestTestNotification(environment: environment, now: Date()) {
            case .success(let value): token = value
            case .failure(let failure):
                outcome.problem = "Apple did not accept the request: \(failure)"
                return outcome
            }
            let deadline = Date().addingTimeInterval(wait)
            while true {
                switch await client.testNotificationStatus(token: token, environment: environment, now: Date()) {
                case .success(let status):
                    outcome.attempts = status.sendAttempts.map { ($0.date, $0.result.rawValue) }
                    outcome.problem = nil
                    if status.delivered {
                        outcome.delivered = true
                        return outcome
                    }
                case .failure(.invalid(_, 4_040_008, _)):
                    outcome.problem = "Apple has no status for the test notification yet"
                case .failure(let failure):
                    outcome.problem = "Get Test Notification Status failed: \(failure)"
                }
                guard Date().addingTimeInterval(interval) <= deadline else { return outcome }
                try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            }
        }.value
    }

    /// A catch-up over `ledger` with the client and receiver `depot serve` would build (no metrics).
    package static func notificationSync(_ configuration: DepotConfiguration, ledger: Ledger, logger: Logger,
                                         now: @escaping @Sendable () -> Date = { Date() }) throws -> NotificationSync {
        let (client, verifier) = try makeClient(configuration)
        var receiver = NotificationReceiver(ledger: ledger, signedData: verifier, bundleID: configuration.bundleID,
                                            sharedSecret: configuration.appleSharedSecret, logger: logger, now: { Date() })
        // A CONSUMPTION_REQUEST caught up here is queued in the ledger; the server sends the answer.
        receiver.answersConsumptionRequests = configuration.consumptionInfo.isOn
        return NotificationSync(client: client, ledger: ledger, receiver: receiver, metrics: nil, logger: logger, now: now)
    }

    /// The API client and JWS verifier `depot serve` would build; a configuration error without a key.
    static func makeClient(_ configuration: DepotConfiguration) throws -> (ServerAPIClient, SignedDataVerifier) {
        let settings = try ServerAPISettings.resolve(configuration)
        let roots = try DepotApp.loadTrustedRoots(configuration.appleRootCertificateFiles)
        let verifier = SignedDataVerifier(trustedRoots: roots, bundleID: configuration.bundleID, allowSandbox: configuration.allowSandbox,
                                          appAppleID: configuration.appleAppID)
        guard let client = settings.client(configuration, verifier: verifier, observer: nil, executor: WorkerPool.shared) else {
            throw ConfigurationError(option: "apple-api-key",
                                     "the App Store Server API needs an In-App Purchase key (--apple-api-key, --apple-api-key-id, --apple-api-issuer)")
        }
        return (client, verifier)
    }
}
