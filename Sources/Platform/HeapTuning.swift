import CLinux

/// Tuning of the C heap (glibc `malloc`) for a process that frees and allocates large buffers over and over.
public enum HeapTuning {
    /// Keeps allocations up to `bytes` in the heap instead of a fresh `mmap`/`munmap` each time, so a
    /// buffer freed and allocated again reuses memory instead of faulting in new pages (a page fault per
    /// 4 KiB, every time); the heap is trimmed only above twice that.
    public static func keepLargeAllocationsInHeap(upTo bytes: Int32) {
        clinux_keep_large_allocations_in_heap(bytes)
    }

    /// Lets all threads allocate from at most `count` arenas from now on. glibc gives a new thread an arena of
    /// its own (up to eight per core), and memory freed in one arena is not reused by threads of another: a
    /// process that starts a thread per transfer and hands its buffers to other threads then faults in fresh
    /// pages for most buffers. Call it before the threads start.
    public static func limitArenas(to count: Int32) {
        clinux_limit_malloc_arenas(count)
    }
}
