import CLinux
import Foundation

/// A small pool of dedicated threads that runs the server's asynchronous work (`Reply.later`, body sinks).
///
/// Running it here rather than on the cooperative pool keeps request work independent of whatever else the
/// process does with Swift concurrency: code that blocks a cooperative thread (a test using blocking
/// sockets, a library doing synchronous I/O) cannot starve the server's replies.
///
/// `@unchecked Sendable`: the job queue is guarded by `condition`.
public final class WorkerPool: TaskExecutor, @unchecked Sendable {
    /// The process-wide pool (threads are never torn down).
    public static let shared = WorkerPool(threads: max(4, System.coreCount * 2))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0

    /// Only `shared` exists: its threads run for the life of the process and keep the pool alive.
    private init(threads: Int) {
        for i in 0..<threads {
            let thread = Thread { self.work() }
            thread.name = "depot-worker-\(i)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        // Background work yields to the event loops.
        _ = clinux_set_thread_nice(5)
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024 {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
