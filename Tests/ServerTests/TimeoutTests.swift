import DepotTestSupport
import Foundation
import HTTP
import Server
import Testing

extension ServerTests {
    // http-decisions.md: a slow client cannot hold a connection forever.
    @Suite("Engine: timeouts (spec §3)")
    struct TimeoutTests {
        @Test("a client that sends its head one byte every 300 ms is cut off after the header timeout")
        func slowHeader() async throws {
            let server = try TestServer(headerTimeout: 1000, idleTimeout: 30_000)
            // The slow client blocks for seconds: on a thread of its own (not one of the cooperative pool's few).
            let (sent, closed) = try await OffPool.run { () throws -> (Int, Bool) in
                let connection = try server.connect()
                let request = Array(get("/hello").utf8)   // 34 bytes: 10 s at this pace
                var sent = 0
                while sent < request.count {
                    guard connection.send([request[sent]]) else { return (sent, true) }
                    sent += 1
                    // The 300 ms wait is the slowness itself; it ends early if the server closes.
                    if connection.isClosedByPeer(timeout: 0.3) { return (sent, true) }
                }
                return (sent, false)
            }
            #expect(closed, "the whole head went through: the header timeout did not fire")
            #expect(sent >= 2, "closed too early to be the timeout")
            #expect(sent <= 8, "1 s header timeout, checked every 250 ms: closed after \(sent) bytes")
            #expect(server.responder.requestCount == 0)
            await server.stop()
        }

        @Test("the header timeout also applies to the second request on a keep-alive connection")
        func slowSecondHeader() async throws {
            let server = try TestServer(headerTimeout: 1000, idleTimeout: 30_000)
            let (status, bytes, closed) = try await OffPool.run { () throws -> (Int, [UInt8], Bool) in
                let connection = try server.connect()
                connection.send(get("/hello"))
                let status = try connection.readResponse().status
                connection.send("GET /hello HTTP/1.1\r\n")
                let (bytes, closed) = connection.readUntilClose(timeout: 5)
                return (status, bytes, closed)
            }
            #expect(status == 200)
            #expect(closed)
            #expect(bytes.isEmpty)
            await server.stop()
        }

        @Test("a connection that never sends anything is closed after the header timeout")
        func silentConnection() async throws {
            let server = try TestServer(headerTimeout: 1000, idleTimeout: 30_000)
            let (bytes, closed) = try await OffPool.run { () throws -> ([UInt8], Bool) in
                try server.connect().readUntilClose(timeout: 5)
            }
            #expect(closed)
            #expect(bytes.isEmpty)
            await server.stop()
        }

        @Test("an idle keep-alive connection is closed after the idle timeout, not before")
        func idleKeepAlive() async throws {
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 1000)
            let (status, closedByPeer, idled) = try await OffPool.run { () throws -> (Int, Bool, Double) in
                let connection = try server.connect()
                connection.send(get("/hello"))
                let status = try connection.readResponse().status
                let idleSince = Date()
                let closedByPeer = connection.isClosedByPeer(timeout: 5)
                return (status, closedByPeer, Date().timeIntervalSince(idleSince))
            }
            #expect(status == 200)
            #expect(closedByPeer)
            #expect(idled > 0.7 && idled < 3, "closed after \(idled) s")
            await server.stop()
        }

        // A client that stops reading a large download must not hold the server's resources forever,
        // and must not hold up anyone else meanwhile.
        @Test("a client that stops reading a large file is cut off after the write timeout; others are served meanwhile")
        func writeStall() async throws {
            let size: Int64 = 256 << 20
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000, writeTimeout: 1000, loops: 1,
                                        sparseFileSize: size)
            // Seconds of blocking socket calls: on a thread of their own (not one of the cooperative pool's few).
            let (cutOff, served, start) = try await OffPool.run { () throws -> (Bool, Int, [UInt8]?) in
                let stalled = try server.connect()
                stalled.setReceiveBuffer(4096)
                stalled.send(get("/file"))
                let other = try server.connect()
                var served = 0
                // Served while the stalled download is pending, until the server gives up on it (bounded: ~10 s).
                let cutOff = eventually(attempts: 200, intervalMilliseconds: 50) {
                    other.send(get("/hello"))
                    if (try? other.readResponse(timeout: 2))?.status == 200 { served += 1 }
                    return server.server.openConnections == 1
                }
                // The stalled client got the start of the response, not all of it (draining the rest through a
                // 4 KiB window would take a minute, so it is dropped with a reset instead).
                let start = stalled.readSome(timeout: 2)
                stalled.setResetOnClose()
                return (cutOff, served, start)
            }
            #expect(cutOff, "the stalled connection was never closed")
            #expect(served >= 5, "the other client was served \(served) times meanwhile")
            let head = try #require(start)
            #expect(String(decoding: head.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            await server.stop()
        }

        // The write timeout measures a stall, not the whole download.
        @Test("a reader that pauses, each pause shorter than the write timeout but longer in all, is not cut off")
        func pausingReader() async throws {
            let size = 128 << 20
            let server = try TestServer(headerTimeout: 30_000, idleTimeout: 30_000, writeTimeout: 1000,
                                        sparseFileSize: Int64(size))
            // 1.8 s of pauses and 128 MiB of blocking reads: on a thread of their own (not a cooperative one).
            let (headSeen, received, after) = try await OffPool.run { () throws -> (Bool, Int, String) in
                let connection = try server.connect()
                connection.send(get("/file"))
                var head: [UInt8] = []
                while head.firstRange(of: [13, 10, 13, 10]) == nil, let piece = connection.readSome(timeout: 2), !piece.isEmpty {
                    head += piece
                }
                guard let headEnd = head.firstRange(of: [13, 10, 13, 10])?.upperBound else { return (false, 0, "") }
                var received = head.count - headEnd
                for _ in 0..<3 {
                    usleep(600_000)   // slow on purpose: 1.8 s of pauses in all
                    // Each burst drains more than the socket buffers hold, so the server sees the progress.
                    let goal = min(size, received + 24 << 20)
                    while received < goal, let piece = connection.readSome(timeout: 2), !piece.isEmpty { received += piece.count }
                }
                while received < size, let piece = connection.readSome(timeout: 2), !piece.isEmpty { received += piece.count }
                connection.send(get("/hello"))
                return (true, received, try connection.readResponse().text)
            }
            #expect(headSeen, "no response head")
            #expect(received == size, "received \(received) of \(size) body bytes")
            #expect(after == "hello\n", "still open and in step")
            await server.stop()
        }
    }
}
