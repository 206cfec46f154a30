import Foundation

/// Where a downloader's file work runs: writes at chunk offsets, journal saves, the re-reads of a resume, copies
/// out of an installed version, final sizes, removals and an update's switch. One job at a time, in the order
/// given, on a thread of a serial dispatch queue: never on one of Swift's cooperative threads, which a write to a
/// stalled volume (a network file system, a sleeping disk, a full device's retries) would otherwise hold, and with
/// it every task of the app that shares the pool (there are as many as cores). Serial dispatch queues run on
/// overcommitting threads, so one blocked queue does not hold up another downloader's.
///
/// Serial also orders the work: a journal saved after a write is on disk only after the bytes it vouches for were
/// written.
package final class FileWorkQueue: Sendable {
    private let queue: DispatchQueue

    /// A queue of its own, named `label` (it shows in a debugger's thread list).
    package init(label: String = "depot.client.files") {
        queue = DispatchQueue(label: label)
    }

    /// `body`'s result (or error), computed on the queue after the work handed in before it.
    package func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
