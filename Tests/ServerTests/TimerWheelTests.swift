import Server
import Testing

/// The per-loop timer structure: deadlines armed, moved, cancelled and fired, never early.
@Suite("Timer wheel")
struct TimerWheelTests {
    static func expire(_ wheel: inout TimerWheel, at now: UInt64) -> [Int] {
        var expired: [Int] = []
        wheel.expire(now: now, into: &expired)
        return expired.sorted()
    }

    @Test("a deadline fires at or after its time (at most one slot late), never before, and only once")
    func firesOnTime() {
        var wheel = TimerWheel(now: 1000)
        wheel.schedule(3, at: 1256)      // on a slot boundary: exact
        wheel.schedule(7, at: 1100)      // inside a slot: at that slot's end
        #expect(Self.expire(&wheel, at: 1099) == [])
        #expect(Self.expire(&wheel, at: 1100 + TimerWheel.resolution - 1) == [7])
        #expect(Self.expire(&wheel, at: 1255) == [])
        #expect(Self.expire(&wheel, at: 1256) == [3])
        #expect(Self.expire(&wheel, at: 5000) == [])
        #expect(wheel.count == 0)
        #expect(wheel.millisecondsUntilNext(now: 5000) == nil, "nothing armed: the loop may sleep")
    }

    @Test("moving a deadline later costs nothing now and fires at the new time; earlier moves it at once")
    func moves() {
        var wheel = TimerWheel(now: 0)
        wheel.schedule(1, at: 104)
        wheel.schedule(1, at: 60_104)   // an idle deadline pushed on by an answered request
        #expect(wheel.deadline(of: 1) == 60_104)
        #expect(Self.expire(&wheel, at: 200) == [], "the entry was visited and moved, not fired")
        #expect(Self.expire(&wheel, at: 60_103) == [])
        #expect(Self.expire(&wheel, at: 60_104) == [1])
        wheel.schedule(2, at: 90_000)
        wheel.schedule(2, at: 61_000)
        #expect(Self.expire(&wheel, at: 61_000) == [2])
    }

    @Test("cancelled deadlines never fire; the wait is the time to the earliest slot")
    func cancelAndWait() {
        var wheel = TimerWheel(now: 0)
        wheel.schedule(4, at: 500)
        wheel.schedule(5, at: 2000)
        let wait = wheel.millisecondsUntilNext(now: 100) ?? 0
        #expect(wait >= 400 && wait < 400 + TimerWheel.resolution)
        wheel.schedule(4, at: 0)
        #expect(Self.expire(&wheel, at: 1000) == [])
        #expect(Self.expire(&wheel, at: 2000) == [5])
    }

    @Test("deadlines beyond one revolution wait for theirs; a long sleep visits every slot once")
    func longDeadlines() {
        var wheel = TimerWheel(now: 0)
        let revolution = TimerWheel.resolution * UInt64(TimerWheel.slotCount)
        wheel.schedule(9, at: 3 * revolution + 40)
        wheel.schedule(10, at: 40)
        #expect(Self.expire(&wheel, at: 50) == [10])
        #expect(Self.expire(&wheel, at: revolution + 40) == [])
        #expect(Self.expire(&wheel, at: 2 * revolution + 40) == [])
        #expect(Self.expire(&wheel, at: 10 * revolution) == [9])
    }

    @Test("many connections: each fires once, in its own time")
    func many() {
        var wheel = TimerWheel(now: 0)
        for key in 0..<2000 { wheel.schedule(key, at: UInt64(1000 + key * 7)) }
        var fired: [Int] = []
        var now: UInt64 = 0
        while now < 20_000 {
            now += 13
            let batch = Self.expire(&wheel, at: now)
            for key in batch { #expect(UInt64(1000 + key * 7) <= now) }
            fired += batch
        }
        #expect(fired.sorted() == Array(0..<2000))
    }
}
