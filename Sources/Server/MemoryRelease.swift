import CLinux
import Dispatch
import Synchronization

/// Returns the heap's free pages to the system after a peak (`malloc_trim`), off the event loops: it walks every
/// arena and may take milliseconds. Requests made while one is pending are folded into it.
enum MemoryRelease {
    private static let pending = Atomic<Bool>(false)
    private static let queue = DispatchQueue(label: "depot-memory-release", qos: .utility)
    /// How many times memory was returned (tests).
    static let releases = Atomic<Int>(0)

    static func returnFreeMemorySoon() {
        guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // A short delay lets the rest of a wave of closing connections free their buffers first.
        queue.asyncAfter(deadline: .now() + .milliseconds(50)) {
            pending.store(false, ordering: .releasing)
            clinux_release_free_memory()
            releases.add(1, ordering: .relaxed)
        }
    }
}
