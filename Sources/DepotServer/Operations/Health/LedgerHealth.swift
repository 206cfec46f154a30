import DepotCore
package import DepotWire
import Foundation
import Ledger
import Synchronization

/// The ledger's part (operations.md §3, scale-out.md §3). A SQLite ledger this instance cannot write makes it
/// `unavailable` (purchases could not be recorded): its probe fails, or a write failed for a storage reason
/// (disk full, read-only, I/O error) and no probe has committed since; the reason quotes that write's error. A shared PostgreSQL ledger that cannot be reached makes it
/// `degraded`: it still serves the lists, manifests and, for `--ledger-stale-max` seconds, downloads.
package struct LedgerHealth: HealthContributor {
    let backend: LedgerBackend
    /// A cheap write probe.
    let writable: @Sendable () async -> Bool
    /// Whether the shared ledger's feed is connected, and when it last confirmed the state.
    let feed: @Sendable () -> (up: Bool, lastConfirmed: Date)
    /// What the SQLite write that marked the ledger unwritable said.
    let writeFailure: @Sendable () -> String?
    /// `--ledger-stale-max`, for the reason's text.
    let staleMax: Double

    /// How long the write probe of a shared ledger may take before it counts as failed: a load balancer's
    /// health check must not wait for a database that hangs.
    static let probeTimeout: Duration = .seconds(2)

    /// The part of the server's `ledger`.
    init(ledger: Ledger, staleMax: Double) {
        backend = ledger.backend
        writable = { await ledger.checkWritable() }
        feed = { (ledger.health.up, ledger.health.lastConfirmed) }
        writeFailure = { ledger.health.writeFailure }
        self.staleMax = staleMax
    }

    /// A SQLite ledger's part with the write probe `writable`.
    package init(writable: @escaping @Sendable () async -> Bool) {
        backend = .sqlite
        self.writable = writable
        feed = { (true, Date()) }
        writeFailure = { nil }
        staleMax = 0
    }

    package func contribute(to report: inout HealthReport) async {
        let ok: Bool
        switch backend {
        case .sqlite:
            ok = await writable()
            if !ok { report.fail(because: "the ledger cannot be written" + (writeFailure().map { ": \($0)" } ?? "")) }
        case .postgres:
            let (up, lastConfirmed) = feed()
            ok = up ? await Self.probe(writable, within: Self.probeTimeout) : false
            if !ok { report.degrade(because: Self.sharedLedgerReason(lastConfirmed, staleMax: staleMax)) }
        }
        report.ledger = HealthReport.LedgerState(status: ok ? HealthReport.ok : HealthReport.unavailable, backend: backend.rawValue)
    }

    /// What a degraded report says while the shared ledger is away.
    static func sharedLedgerReason(_ lastConfirmed: Date, staleMax: Double) -> String {
        let confirmed = Timestamp.rfc3339(Int64(lastConfirmed.timeIntervalSince1970))
        let seconds = staleMax == staleMax.rounded() ? String(Int64(staleMax)) : String(staleMax)
        return "the shared ledger (PostgreSQL) cannot be reached: purchases and notifications are refused with 503; "
            + "pack downloads are served from the state confirmed at \(confirmed) for at most \(seconds) s"
    }

    /// The ledger's write probe, or `false` once `limit` has passed without an answer (the probe then finishes
    /// on its own).
    static func probe(_ writable: @escaping @Sendable () async -> Bool, within limit: Duration) async -> Bool {
        let answer = FirstAnswer()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            answer.wait(continuation)
            Task { answer.give(await writable()) }
            Task {
                try? await Task.sleep(for: limit)
                answer.give(false)
            }
        }
    }
}

/// Resumes a waiter with the first of several answers; the later ones are dropped.
private final class FirstAnswer: Sendable {
    private let waiter = Mutex<CheckedContinuation<Bool, Never>?>(nil)

    func wait(_ continuation: CheckedContinuation<Bool, Never>) {
        waiter.withLock { $0 = continuation }
    }

    func give(_ value: Bool) {
        waiter.withLock { waiting in
            defer { waiting = nil }
            return waiting
        }?.resume(returning: value)
    }
}
