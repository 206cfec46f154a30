import Foundation

/// Runs blocking work (child processes, synchronous sockets, sleeps, waits) on a thread of its own and resumes the
/// calling task from that thread, so a test never blocks Swift's cooperative pool: with two cooperative threads
/// (a 2-core CI machine), two blocked ones stall every other task of the test process, the in-process servers'
/// `.later` replies and other suites' timing measurements included.
///
/// Not `DispatchQueue.global()`: on Linux its worker threads are the same few (one per core) that run Swift
/// tasks, so a handful of blocked dispatch workers starve every task in the process.
public enum OffPool {
    /// `body`'s result (or error), computed on a new thread.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
