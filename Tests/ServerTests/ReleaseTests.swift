import Foundation
import Server
import Testing

extension ServerTests {
    @Suite("Engine: a stopped server is freed")
    struct ReleaseTests {
        /// The loops hold the core and the core lists the loops; after a stop that cycle must be broken, or
        /// every stopped server keeps its epoll set, eventfd and buffers for the life of the process.
        @Test func stoppedServerFreesItsLoops() async throws {
            var server: TestServer? = try TestServer()
            let loops = server!.server.loops.map(WeakLoop.init)
            #expect(loops.count == 2)
            await server!.stop()
            server = nil
            #expect(await eventually { loops.allSatisfy { $0.value == nil } }, "a stopped server's loops are still alive")
        }
    }
}

final class WeakLoop: @unchecked Sendable {
    weak var value: EventLoop?
    init(_ value: EventLoop) { self.value = value }
}
