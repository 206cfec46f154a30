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

    /// Buffers of 256 KiB and more (large request bodies) get mappings of their own, returned to the system as
    /// soon as they are freed. glibc's default threshold rises after every such free, after which 1 MiB bodies
    /// would be carved from the heap and stay resident when freed. Set once per process, by the first server.
    static let largeBuffersMapped: Void = clinux_map_large_allocations(256 * 1024)

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
