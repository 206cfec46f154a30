import DepotTestSupport
import Foundation
import HTTP
import Server
import Testing

extension ServerTests {
    @Suite("Engine: peers that vanish while their request is being worked on")
    struct HangUpTests {
        // epoll reports a reset even when the connection asks for no events; unhandled, the loop would be woken
        // over and over (busy) until the reply was ready, and the dead connection would be kept that long.
        @Test("a reset during a reply computed off the loop ends the connection at once")
        func resetWhileReplyPending() async throws {
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000, loops: 1)
            var connection: RawHTTPConnection? = try server.connect()
            connection?.send(get("/gate"))
            #expect(await eventually { server.responder.gate.waiters == 1 })
            connection?.setResetOnClose()
            connection = nil
            #expect(await eventually { server.server.openConnections == 0 }, "the reset connection is kept until its reply")
            server.responder.gate.open()
            #expect(try server.exchange(get("/hello")).status == 200)
            await server.stop()
        }

        @Test("a FIN (half-close) during a pending reply still gets the reply")
        func halfCloseWhileReplyPending() async throws {
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000, loops: 1)
            let connection = try server.connect()
            connection.send(get("/gate"))
            #expect(await eventually { server.responder.gate.waiters == 1 })
            connection.shutdownWrite()
            server.responder.gate.open()
            let (bytes, closed) = connection.readUntilClose()
            #expect(closed)
            #expect(String(decoding: bytes, as: UTF8.self).hasSuffix("gate opened"))
            await server.stop()
        }

        @Test("a reset while the sink holds a piece: the sink is aborted after that piece, never during it")
        func resetWhileSinkBusy() async throws {
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000, loops: 1,
                                        makeSink: { CountingSink(delayNanoseconds: 400_000_000) })
            var connection: RawHTTPConnection? = try server.connect()
            connection?.send(Array("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n".utf8) + patternBytes(1000))
            #expect(await eventually { server.responder.sinks.first?.snapshot.active == true })
            connection?.setResetOnClose()
            connection = nil
            let sink = try #require(server.responder.sinks.first)
            #expect(await eventually { sink.snapshot.aborted })
            #expect(!sink.snapshot.abortOverlapped)
            #expect(!sink.snapshot.finished)
            #expect(await eventually { server.server.openConnections == 0 })
            await server.stop()
        }
    }
}
