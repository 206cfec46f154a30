/// The deadlines of one loop's connections, in a hashed timing wheel keyed by descriptor.
///
/// Arming, moving and cancelling a deadline are O(1) (a doubly linked list per slot), and a deadline that moves
/// later — what every answered request does to its connection's idle deadline — costs one store: the entry
/// stays in the earlier slot and moves when that slot comes round. The loop's `epoll_wait` timeout is the time
/// to the earliest occupied slot; no loop ever sweeps over all its connections.
package struct TimerWheel {
    /// Milliseconds per slot.
    package static let resolution: UInt64 = 8
    /// Slots in one revolution (8,192 × 8 ms ≈ 65 s); later deadlines wait for their revolution in their slot.
    package static let slotCount = 8192

    private var heads = [Int32](repeating: -1, count: TimerWheel.slotCount)
    // Per descriptor.
    private var next: [Int32] = []
    private var previous: [Int32] = []
    /// The tick of the slot an entry is linked in; `UInt64.max` when it is not linked.
    private var linkedTick: [UInt64] = []
    /// The deadline itself (milliseconds); 0 when none.
    private var due: [UInt64] = []
    /// The next tick to be processed.
    private var cursor: UInt64
    /// No entry is linked at a tick before this one (`UInt64.max`: none at all).
    private var earliest = UInt64.max
    /// Linked entries.
    package private(set) var count = 0
    /// The keys of the slot being expired (reused).
    private var firing: [Int32] = []

    package init(now: UInt64) {
        cursor = now / Self.resolution
    }

    /// Arms (or moves) the deadline of `key` to `deadline` milliseconds; 0 cancels it.
    package mutating func schedule(_ key: Int, at deadline: UInt64) {
        if key >= due.count {
            if deadline == 0 { return }
            grow(to: key + 1)
        }
        due[key] = deadline
        guard deadline != 0 else { unlink(key); return }
        // Never early: a deadline in the middle of a slot fires when the slot's end is reached.
        let tick = max(cursor, (deadline + Self.resolution - 1) / Self.resolution)
        if linkedTick[key] != .max {
            if linkedTick[key] <= tick { return }
            unlink(key)
        }
        link(key, tick: tick)
    }

    /// The deadline armed for `key` (0: none).
    package func deadline(of key: Int) -> UInt64 { key < due.count ? due[key] : 0 }

    /// Milliseconds from `now` until the earliest occupied slot, or nil when nothing is armed.
    package func millisecondsUntilNext(now: UInt64) -> UInt64? {
        guard earliest != .max else { return nil }
        let at = earliest * Self.resolution
        return at > now ? at - now : 0
    }

    /// Appends to `due` every key whose deadline is at or before `now`, and clears those deadlines (the caller
    /// then tells each key's owner, which may arm a deadline again).
    package mutating func expire(now: UInt64, into expired: inout [Int]) {
        let nowTick = now / Self.resolution
        guard nowTick >= cursor else { return }
        guard earliest <= nowTick else { cursor = nowTick + 1; return }
        // After a long sleep every slot is visited once, not once per revolution missed.
        let steps = min(nowTick - cursor, UInt64(Self.slotCount - 1))
        let first = nowTick - steps
        cursor = nowTick + 1
        for tick in first...nowTick {
            let slot = Int(tick % UInt64(Self.slotCount))
            guard heads[slot] >= 0 else { continue }
            firing.removeAll(keepingCapacity: true)
            var key = Int(heads[slot])
            while key >= 0 {
                firing.append(Int32(key))
                linkedTick[key] = .max
                count -= 1
                key = Int(next[key])
            }
            heads[slot] = -1
            for entry in firing {
                let key = Int(entry)
                let deadline = due[key]
                if deadline != 0 && deadline <= now {
                    due[key] = 0
                    expired.append(key)
                } else if deadline != 0 {
                    link(key, tick: max(cursor, (deadline + Self.resolution - 1) / Self.resolution))
                }
            }
        }
        if count == 0 { earliest = .max }
        if earliest < cursor { findEarliest() }
    }

    private mutating func grow(to size: Int) {
        let newSize = max(size, due.count * 2, 64)
        let extra = newSize - due.count
        next.append(contentsOf: repeatElement(-1, count: extra))
        previous.append(contentsOf: repeatElement(-1, count: extra))
        linkedTick.append(contentsOf: repeatElement(.max, count: extra))
        due.append(contentsOf: repeatElement(0, count: extra))
    }

    private mutating func link(_ key: Int, tick: UInt64) {
        let slot = Int(tick % UInt64(Self.slotCount))
        let head = heads[slot]
        next[key] = head
        previous[key] = -1
        if head >= 0 { previous[Int(head)] = Int32(key) }
        heads[slot] = Int32(key)
        linkedTick[key] = tick
        count += 1
        if tick < earliest { earliest = tick }
    }

    private mutating func unlink(_ key: Int) {
        guard key < linkedTick.count, linkedTick[key] != .max else { return }
        let slot = Int(linkedTick[key] % UInt64(Self.slotCount))
        let before = previous[key]
        let after = next[key]
        if before >= 0 { next[Int(before)] = after } else { heads[slot] = after }
        if after >= 0 { previous[Int(after)] = before }
        linkedTick[key] = .max
        count -= 1
        if count == 0 { earliest = .max }
    }

    /// A new lower bound for the earliest tick: the first occupied slot from the cursor on.
    private mutating func findEarliest() {
        guard count > 0 else { earliest = .max; return }
        for offset in 0..<UInt64(Self.slotCount) where heads[Int((cursor + offset) % UInt64(Self.slotCount))] >= 0 {
            earliest = cursor + offset
            return
        }
        earliest = .max
    }
}
