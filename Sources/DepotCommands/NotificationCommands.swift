import ArgumentParsing
import DepotServer
import DepotWire
import Foundation

/// `depot notifications sync`: one catch-up of App Store Server Notifications (spec app-store-server-api §6).
struct NotificationSyncCommand: Command {
    static let name = "sync"
    static let summary = "Read Apple's notification history once and apply what the server missed."
    static let synopsis: String? = "[--since ISO8601] [options]"

    @Option("since", .internetDate, help: "start the window here (at most 180 days back) instead of where the last sync ended; the stored window stays",
            valueName: "ISO8601")
    var since: Date?
    @OptionGroup(only: "data", "ledger", "bundle-id", "apple-root-certs", "allow-sandbox", "apple-api-key", "apple-api-key-id", "apple-api-issuer",
                 "apple-app-id", "apple-api-url", "apple-api-sandbox-url", "apple-timeout", "consumption-info")
    var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let report = try await AppStoreNotifications.sync(configuration, since: since)
        for window in report.windows {
            let span = "\(window.start.map(InternetDate.format) ?? "-") → \(window.end.map(InternetDate.format) ?? "-")"
            switch window.outcome {
            case .synced:
                say("\(window.environment) \(span): \(window.seen) seen, \(window.new) not received before, \(window.changed) changed access"
                    + (window.refused > 0 ? ", \(window.refused) refused (see the log)" : ""))
            case .skipped(let until):
                say("\(window.environment): skipped, another instance holds the window until \(InternetDate.format(until))")
            case .failed(let reason):
                say("\(window.environment) \(span): failed, the window stays for next time: \(reason)")
            }
        }
        say("saw \(report.seen) notification\(report.seen == 1 ? "" : "s"), \(report.changed) changed something")
        return report.succeeded ? 0 : 1
    }
}

/// `depot notifications test`: asks Apple for a `TEST` notification and reports whether it arrived.
struct NotificationTestCommand: Command {
    static let name = "test"
    static let summary = "Ask Apple to send a TEST notification to the app's notification URL and report whether it arrived."
    static let synopsis: String? = "[--sandbox] [--wait SECONDS] [options]"

    @Option("sandbox", help: "ask the sandbox environment instead of production")
    var sandbox = false
    @Option("wait", .seconds, help: "how long to wait for Apple to deliver it")
    var wait: Double = 30
    @OptionGroup(only: "bundle-id", "apple-root-certs", "allow-sandbox", "apple-api-key", "apple-api-key-id", "apple-api-issuer",
                 "apple-app-id", "apple-api-url", "apple-api-sandbox-url", "apple-timeout")
    var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let outcome = try await AppStoreNotifications.test(configuration, sandbox: sandbox, wait: wait)
        for attempt in outcome.attempts {
            say("\(outcome.environment): attempt at \(InternetDate.format(attempt.date)): \(attempt.result)")
        }
        if outcome.delivered {
            say("\(outcome.environment): the test notification arrived (Apple's delivery succeeded)")
            return 0
        }
        let waited = wait == wait.rounded() ? String(Int(wait)) : String(wait)
        say("\(outcome.environment): the test notification did not arrive within \(waited) s" + (outcome.problem.map { ": \($0)" } ?? ""))
        return 1
    }
}

extension OptionParser where Value == Date {
    /// An RFC 3339 / ISO 8601 time (`2026-11-24T00:00:00Z`, fractions and offsets accepted).
    static var internetDate: OptionParser<Date> {
        OptionParser(valueName: "ISO8601", refusal: "is not an ISO 8601 time such as 2026-11-24T00:00:00Z",
                     parse: { InternetDate.parse($0) }, format: { InternetDate.format($0) })
    }
}
