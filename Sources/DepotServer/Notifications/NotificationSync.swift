import AppStore
import DepotCore
import DepotWire
package import Foundation
import Ledger
import Server
import Synchronization

/// Catches up on App Store Server Notifications Depot missed (spec app-store-server-api §6): at start and
/// then every `interval` seconds, Get Notification History for production and (when sandbox is allowed)
/// sandbox, over the window from the end of the last successful sync (kept in the ledger; the first covers
/// 7 days, never more than 180, less ten minutes) to now. Each verified `signedPayload` is applied exactly like a posted V2
/// notification, so one already received changes nothing. A failed window stays where it was.
///
/// Instances sharing a ledger claim each environment's window in it before reading it: one instance syncs a
/// window, the others skip it (a claim lapses after `lease` seconds, so a crashed instance does not hold it).
package final class NotificationSync: Sendable {
    static let firstWindow: TimeInterval = 7 * 86_400
    /// Apple refuses a start more than 180 days back; ten minutes less leaves room for clock skew and the
    /// time the request takes.
    static let longestWindow: TimeInterval = 180 * 86_400 - 600

    let client: ServerAPIClient
    let ledger: Ledger
    let receiver: NotificationReceiver
    let metrics: Metrics?
    let logger: Logger
    /// This instance's name in the ledger's claims.
    let owner: String
    /// How long a claim is held at most, in seconds.
    let lease: TimeInterval
    let now: @Sendable () -> Date
    /// Counts the syncs that completed (tests wait on it).
    let completed = CompletionCounter()
    private let loop = Mutex<Task<Void, Never>?>(nil)
    /// One sync at a time in this process (the periodic one, a manual one).
    private let running = Mutex<Bool>(false)

    init(client: ServerAPIClient, ledger: Ledger, receiver: NotificationReceiver, metrics: Metrics?, logger: Logger,
         owner: String = UUID().uuidString.lowercased(), lease: TimeInterval = 900, now: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.ledger = ledger
        self.receiver = receiver
        self.metrics = metrics
        self.logger = logger
        self.owner = owner
        self.lease = lease
        self.now = now
    }

    /// The environments read: production, and sandbox when sandbox purchases are accepted.
    var environments: [AppStoreEnvironment] {
        client.configuration.allowSandbox ? [.production, .sandbox] : [.production]
    }

    /// Syncs now and then every `interval` seconds until `stop()`, on the server's worker pool.
    func start(every interval: Int) {
        let task = Task(executorPreference: WorkerPool.shared) { [self] in
            while !Task.isCancelled {
                _ = await syncOnce()
                try? await Task.sleep(for: .seconds(interval))
            }
        }
        loop.withLock { $0 = task }
    }

    /// Stops the periodic sync and waits for a sync in progress to end.
    func stop() async {
        guard let task = loop.withLock({ current -> Task<Void, Never>? in defer { current = nil }; return current }) else { return }
        task.cancel()
        await task.value
    }

    /// One sync of every environment. With `since`, the window starts there (at most 180 days back) instead
    /// of at the stored end, and the stored window is neither claimed nor moved.
    package func syncOnce(since: Date? = nil) async -> NotificationSyncReport {
        guard running.withLock({ busy in defer { busy = true }; return !busy }) else {
            return NotificationSyncReport(windows: environments.map {
                .init(environment: $0.rawValue, outcome: .failed(reason: "a sync is already running in this process"))
            })
        }
        defer { running.withLock { $0 = false } }
        var windows: [NotificationSyncReport.Window] = []
        for environment in environments {
            let window = await sync(environment, since: since)
            windows.append(window)
            record(window)
        }
        completed.increment()
        return NotificationSyncReport(windows: windows)
    }

    private func sync(_ environment: AppStoreEnvironment, since: Date?) async -> NotificationSyncReport.Window {
        // A whole millisecond: Apple gets `endDate` in milliseconds and the ledger stores the window's end in
        // them, so the next window starts exactly where this one ended (a fraction would round up in the
        // ledger about half the time, and the next window would skip the millisecond this one ended on).
        let end = Self.wholeMillisecond(now())
        let oldest = end.addingTimeInterval(-Self.longestWindow)
        var window = NotificationSyncReport.Window(environment: environment.rawValue, outcome: .synced)
        let start: Date
        if let since {
            start = max(since, oldest)
        } else {
            do {
                switch try await ledger.claimNotificationSync(environment: environment.rawValue, owner: owner, now: end, lease: lease) {
                case .held(let until):
                    window.outcome = .skipped(heldUntil: until)
                    return window
                case .claimed(let syncedThrough):
                    start = max(syncedThrough ?? end.addingTimeInterval(-Self.firstWindow), oldest)
                }
            } catch {
                window.outcome = .failed(reason: "the ledger cannot hold the window: \(error)")
                return window
            }
        }
        window.start = start
        window.end = end
        var failure: String?
        if start < end {
            let result = await client.forEachNotificationPage(from: start, to: end, environment: environment, now: end) { page in
                guard failure == nil else { return }
                for item in page.items {
                    switch item.notification {
                    case .success(let notification):
                        window.seen += 1
                        do throws(NotificationFailure) {
                            let outcome = try await receiver.apply(notification)
                            if outcome.isNew { window.new += 1 }
                            if outcome.changedAccess { window.changed += 1 }
                        } catch {
                            failure = "the ledger could not record notification \(notification.notificationUUID)"
                            return
                        }
                    case .failure(let refusal):
                        window.refused += 1
                        logger.warning(.notificationSync, "notification sync (\(environment)): a notification in Apple's history was not applied: \(refusal)")
                    }
                }
            }
            switch result {
            case .success(let read) where !read.isComplete:
                logger.warning(.notificationSync, "notification sync (\(environment)): more than \(read.pages) pages in one window; the rest is not read")
            case .success:
                break
            case .failure(let apiFailure):
                failure = failure ?? apiFailure.description
            }
        }
        if let failure {
            window.outcome = .failed(reason: failure)
            if since == nil { try? await ledger.releaseNotificationSync(environment: environment.rawValue, owner: owner) }
            return window
        }
        if since == nil {
            do {
                guard try await ledger.completeNotificationSync(environment: environment.rawValue, owner: owner, through: end) else {
                    window.outcome = .failed(reason: "the claim on the window lapsed while it was read (longer than \(Int(lease)) s)")
                    return window
                }
            } catch {
                window.outcome = .failed(reason: "the ledger could not store the window's end: \(error)")
            }
        }
        return window
    }

    /// `date` rounded down to a whole millisecond since 1970.
    static func wholeMillisecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    private func record(_ window: NotificationSyncReport.Window) {
        let span = "\(window.start.map(InternetDate.format) ?? "?") → \(window.end.map(InternetDate.format) ?? "?")"
        switch window.outcome {
        case .synced:
            metrics?.recordNotificationSync(outcome: "ok", recovered: window.new)
            if window.new > 0 || window.refused > 0 {
                logger.info(.notificationSync, "notification sync (\(window.environment)) \(span): \(window.seen) seen, \(window.new) missed and recovered, \(window.changed) changed access, \(window.refused) refused")
            }
        case .skipped:
            metrics?.recordNotificationSync(outcome: "skipped", recovered: 0)
        case .failed(let reason):
            metrics?.recordNotificationSync(outcome: "failed", recovered: window.new)
            logger.warning(.notificationSync, "notification sync (\(window.environment)) \(span) failed, to be covered next time: \(reason)")
        }
    }
}
