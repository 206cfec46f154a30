import CLinux
import Glibc

/// The scheduling priority (nice value) of one thread; Linux keeps it per thread.
public struct ThreadPriority: Sendable, Equatable {
    /// −20 (most favoured) … 19 (least).
    public let nice: Int32

    /// The priority of nice value `nice`.
    public init(nice: Int32) {
        self.nice = nice
    }

    /// Above the rest of the process, for threads that sleep nearly always and must not be held back
    /// under load when they wake (the catalog watcher). Needs privileges; refused quietly without them.
    public static let elevated = ThreadPriority(nice: -5)

    /// Gives the calling thread this priority. Returns false when the system refuses (lowering the nice
    /// value needs `CAP_SYS_NICE` or a suitable `RLIMIT_NICE`).
    @discardableResult
    public func applyToCurrentThread() -> Bool {
        clinux_set_thread_nice(nice) == 0
    }

    /// The calling thread's priority (Linux: `getpriority` of "process 0" is the calling thread).
    public static var ofCurrentThread: ThreadPriority {
        ThreadPriority(nice: getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
    }
}
