import Dispatch

/// Runs blocking work (file writes, fsync, hashing large files) on a private serial queue, never on an
/// event loop or the cooperative thread pool, and hands the result back to async code.
final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}
