import DepotTestSupport
import Foundation
import Platform
import Testing

/// Nice values are per thread on Linux: the watcher's priority must not leak into the rest of the process.
@Suite struct ThreadPriorityTests {
    @Test func applyingSetsTheCallingThreadOnly() async throws {
        let before = ThreadPriority.ofCurrentThread
        let (applied, inside) = try await OffPool.run { () -> (Bool, ThreadPriority) in
            // Raising the nice value (less favoured) is always allowed.
            let applied = ThreadPriority(nice: 7).applyToCurrentThread()
            return (applied, ThreadPriority.ofCurrentThread)
        }
        #expect(applied)
        #expect(inside.nice == 7)
        #expect(ThreadPriority.ofCurrentThread == before)
    }

    @Test func aRefusedPriorityIsReportedNotFatal() async throws {
        let result = try await OffPool.run { () -> (Bool, Int32) in
            _ = ThreadPriority(nice: 10).applyToCurrentThread()
            // Back to a more favoured value needs privileges: refused without them, applied with them.
            let applied = ThreadPriority.elevated.applyToCurrentThread()
            return (applied, ThreadPriority.ofCurrentThread.nice)
        }
        #expect(result.1 == (result.0 ? ThreadPriority.elevated.nice : 10))
    }
}
