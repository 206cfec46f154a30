import DepotTestSupport
import Foundation
import HTTP
import Server
import Synchronization
import Testing

extension ServerTests {
    @Suite("Engine: graceful stop")
    struct ShutdownTests {
        @Test("stop: the in-flight request completes, idle connections close, new connections are refused, stopped() returns")
        func gracefulStop() async throws {
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000, shutdownGrace: 10_000)
            let busy = try server.connect()
            busy.send(get("/gate"))
            let idle = try server.connect()
            idle.send(get("/hello"))
            #expect(try idle.readResponse().status == 200)
            #expect(await eventually { server.responder.gate.waiters == 1 }, "the /gate request never started")

            server.server.stop()
            #expect(idle.isClosedByPeer(timeout: 3), "an idle keep-alive connection is closed at once")
            #expect(await eventually { (try? RawHTTPConnection(port: server.port)) == nil }, "still accepting after stop")

            let stoppedEarly = StopFlag()
            let waiter = Task {
                await server.server.stopped()
                stoppedEarly.set()
            }
            // The in-flight request holds the stop back.
            try await Task.sleep(for: .milliseconds(200))
            #expect(!stoppedEarly.isSet, "stopped() returned while a request was in flight")

            server.responder.gate.open()
            let response = try busy.readResponse()
            #expect(response.text == "gate opened")
            #expect(response.closes, "the last response says the connection ends")
            #expect(busy.isClosedByPeer())
            await waiter.value
            #expect(stoppedEarly.isSet)
            #expect(server.server.openConnections == 0)
            #expect(server.server.connectionsCutOffAtStop == 0, "every connection ended within the grace period")
        }

        @Test("stop: a request that outlives the grace period is cut off (and counted) and stopped() still returns")
        func graceExpires() async throws {
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000, shutdownGrace: 300)
            let busy = try server.connect()
            busy.send(get("/gate"))
            #expect(await eventually { server.responder.gate.waiters == 1 })
            await server.stop()
            #expect(busy.isClosedByPeer())
            #expect(server.server.connectionsCutOffAtStop == 1)
            server.responder.gate.open()
        }

        @Test("stop closes a connection that was refused and is only draining the client's leftovers")
        func stopClosesLingering() async throws {
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000)
            let refused = try server.connect()
            refused.send("GET /hello HTTP/1.1\r\n\r\n")
            #expect(try refused.readResponse().status == 400)
            // The client neither closes nor sends: the server keeps reading (lingering) for a while.
            server.server.stop()
            // Lingering lasts 2 s; a stop must not wait for it.
            #expect(await eventually(attempts: 100) { server.server.openConnections == 0 }, "stop waited for a lingering connection")
            await server.server.stopped()
            #expect(refused.isClosedByPeer())
        }

        @Test("stop twice, and stop of an unused server")
        func stopTwice() async throws {
            let server = try TestServer()
            server.server.stop()
            server.server.stop()
            await server.server.stopped()
            server.server.waitUntilStopped()
        }
    }
}

/// A flag set from another task.
final class StopFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
