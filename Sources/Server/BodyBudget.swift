import Synchronization

/// The bytes of request bodies a server buffers in memory at once (`Handling.collectBody`), shared by its loops.
///
/// A body is admitted only when its declared length (or, for chunked bodies, each decoded piece) fits in what
/// is left; it is given back when its exchange has been answered. After a peak the freed memory is returned to
/// the system (`MemoryRelease`), so a burst of large bodies does not leave the process at its high-water mark.
public final class BodyBudget: Sendable {
    /// The most bytes held at once.
    public let capacity: Int
    private let used = Atomic<Int>(0)
    /// The highest use since memory was last returned to the system.
    private let peak = Atomic<Int>(0)
    /// A peak at least this high makes the return of free memory worth its cost (it walks the heap).
    static let releaseThreshold = 4 << 20

    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Bytes held now.
    public var inUse: Int { used.load(ordering: .relaxed) }

    /// Takes `bytes` from the budget; false (and nothing taken) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        var current = used.load(ordering: .relaxed)
        while true {
            guard current <= capacity - bytes else { return false }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged {
                _ = peak.max(current + bytes, ordering: .relaxed)
                return true
            }
            current = original
        }
    }

    /// Gives `bytes` back; when nothing is held any more after a large peak, free memory goes back to the system.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        let after = used.subtract(bytes, ordering: .relaxed).newValue
        guard after == 0, peak.load(ordering: .relaxed) >= Self.releaseThreshold else { return }
        peak.store(0, ordering: .relaxed)
        MemoryRelease.returnFreeMemorySoon()
    }
}
