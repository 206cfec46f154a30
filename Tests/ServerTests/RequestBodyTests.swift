import DepotTestSupport
import Foundation
import HTTP
import Server
import Testing

/// `bytes` as a chunked body, in chunks of `chunkSize`, with an extension on the first chunk and a trailer.
func chunkedBody(_ bytes: [UInt8], chunkSize: Int) -> [UInt8] {
    var out: [UInt8] = []
    var offset = 0
    while offset < bytes.count {
        let n = min(chunkSize, bytes.count - offset)
        out += Array((String(n, radix: 16) + (offset == 0 ? ";ext=1" : "") + "\r\n").utf8)
        out += bytes[offset..<(offset + n)]
        out += [0x0D, 0x0A]
        offset += n
    }
    return out + Array("0\r\nX-Trailer: t\r\n\r\n".utf8)
}

/// Sends `bytes` from a thread of its own (the server may not read them all before it answers). Not
/// `DispatchQueue.global()`: on a loaded machine its few workers are busy with other tests' tasks, and the
/// send started seconds late, after the server's 1 s header timeout.
func sendInBackground(_ connection: RawHTTPConnection, _ bytes: [UInt8], pieceSize: Int = 64 * 1024) -> DispatchGroup {
    let group = DispatchGroup()
    nonisolated(unsafe) let connection = connection
    group.enter()
    Thread {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + pieceSize)
            if !connection.send(Array(bytes[offset..<end])) { break }
            offset = end
        }
        group.leave()
    }.start()
    return group
}

extension ServerTests {
    @Suite("Engine: request bodies, 100-continue, limits, streaming")
    struct RequestBodyTests {
        @Test("a Content-Length body is collected and echoed; exactly at the limit is fine",
              arguments: [0, 1, 1000, 64 * 1024])
        func echo(size: Int) async throws {
            let server = try TestServer()
            let body = patternBytes(size)
            let connection = try server.connect()
            connection.send(Array("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(size)\r\n\r\n".utf8) + body)
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.body == body)
            connection.send(get("/hello"))
            #expect(try connection.readResponse().status == 200, "keep-alive after a body")
            await server.stop()
        }

        @Test("a chunked body is decoded and echoed, whatever the chunk sizes and however it is split",
              arguments: [(1, 1), (7, 3), (5000, 100), (64 * 1024, 4096)])
        func chunkedEcho(size: Int, chunkSize: Int) async throws {
            let server = try TestServer()
            let body = patternBytes(size)
            let wire = Array("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                + chunkedBody(body, chunkSize: chunkSize) + Array(get("/hello").utf8)
            let connection = try server.connect()
            // Odd-sized writes put the piece boundaries everywhere.
            var offset = 0
            while offset < wire.count {
                let end = min(wire.count, offset + 997)
                connection.send(Array(wire[offset..<end]))
                offset = end
            }
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.body == body)
            #expect(try connection.readResponse().text == "hello\n", "the request after the chunked body")
            await server.stop()
        }

        @Test("a chunked body over the route limit in small chunks is 413 and closes")
        func chunkedOverLimit() async throws {
            let server = try TestServer(echoLimit: 1000)
            let connection = try server.connect()
            let wire = Array("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                + chunkedBody(patternBytes(5000), chunkSize: 100)
            connection.send(wire)
            let response = try connection.readResponse()
            #expect(response.status == 413)
            #expect(response.closes)
            #expect(connection.isClosedByPeer())
            await server.stop()
        }

        // RFC 9110 §10.1.1 and http-decisions.md: 100 Continue before reading a body the route accepts.
        @Test("Expect: 100-continue on an accepted body gets 100 Continue, then the final response")
        func expectContinueAccepted() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let interim = try connection.readResponse()
            #expect(interim.status == 100)
            #expect(interim.rawHead == "HTTP/1.1 100 Continue")
            connection.send("hello")
            let final = try connection.readResponse()
            #expect(final.status == 200)
            #expect(final.text == "hello")
            await server.stop()
        }

        // RFC 9110 §15.2: a server MUST NOT send a 1xx response to an HTTP/1.0 client.
        @Test("Expect: 100-continue from an HTTP/1.0 client gets no 100, only the final response")
        func expectContinueHTTP10() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /echo HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello")
            let (bytes, closed) = connection.readUntilClose()
            #expect(closed)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(text.hasSuffix("\r\n\r\nhello"))
            await server.stop()
        }

        @Test("Expect: 100-continue with a chunked body")
        func expectContinueChunked() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
            #expect(try connection.readResponse().status == 100)
            connection.send(chunkedBody(Array("hello".utf8), chunkSize: 2))
            #expect(try connection.readResponse().text == "hello")
            await server.stop()
        }

        // http-decisions.md: an over-limit declared body gets the final 413 without 100 and without being read.
        @Test("Expect: 100-continue on an over-limit body gets 413 at once, no 100, and the body is never awaited")
        func expectContinueRefused() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n")
            let response = try connection.readResponse(timeout: 3)
            #expect(response.status == 413)
            #expect(response.closes)
            #expect(connection.isClosedByPeer(timeout: 3))
            await server.stop()
        }

        @Test("Expect: 100-continue on a route that takes no body gets the final answer, no 100, then close")
        func expectContinueNotWanted() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /ignore HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let response = try connection.readResponse(timeout: 3)
            #expect(response.status == 200)
            #expect(response.text == "ignored")
            #expect(response.closes)
            #expect(connection.isClosedByPeer(timeout: 3))
            await server.stop()
        }

        @Test("a small unwanted body is read and dropped; the connection stays usable")
        func smallUnwantedBody() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /ignore HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nGET /x HTTP" + get("/hello"))
            let first = try connection.readResponse()
            #expect(first.text == "ignored")
            #expect(!first.closes)
            #expect(try connection.readResponse().text == "hello\n")
            await server.stop()
        }

        @Test("an unwanted large or chunked body is not read: answer, then close",
              arguments: ["Content-Length: 100000\r\n", "Transfer-Encoding: chunked\r\n"])
        func largeUnwantedBody(field: String) async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("POST /ignore HTTP/1.1\r\nHost: t\r\n\(field)\r\n")
            let response = try connection.readResponse()
            #expect(response.text == "ignored")
            #expect(response.closes)
            #expect(connection.isClosedByPeer())
            await server.stop()
        }

        @Test("a streamed body reaches the sink complete and in order, one piece at a time (back-pressure)",
              arguments: [false, true])
        func streamed(chunked: Bool) async throws {
            let server = try TestServer(makeSink: { CountingSink(delayNanoseconds: 1_000_000) })
            let size = 1024 * 1024 + 17
            let body = patternBytes(size)
            let head = chunked ? "Transfer-Encoding: chunked" : "Content-Length: \(size)"
            let wire = Array("POST /stream HTTP/1.1\r\nHost: t\r\n\(head)\r\n\r\n".utf8)
                + (chunked ? chunkedBody(body, chunkSize: 10_000) : body)
            let connection = try server.connect()
            let sending = sendInBackground(connection, wire)
            let response = try connection.readResponse(timeout: 20)
            sending.wait()
            #expect(response.text == "bytes=\(size) inOrder=true overlapping=false")
            let sink = try #require(server.responder.sinks.first)
            let state = sink.snapshot
            #expect(state.finished)
            #expect(!state.aborted)
            #expect(state.pieces > 1, "delivered in pieces")
            #expect(state.pieces <= size / 1024, "pieces are reads, not bytes")
            connection.send(get("/hello"))
            #expect(try connection.readResponse().status == 200)
            await server.stop()
        }

        @Test("a sink that refuses the body: its response is sent, the sink is aborted, the connection closes")
        func sinkRefuses() async throws {
            let server = try TestServer(makeSink: { CountingSink(failAfter: 1) })
            let size = 1024 * 1024
            // Built before connecting: in a debug build on a loaded machine, making 1 MiB takes seconds, longer than
            // the 1 s header timeout.
            let request = Array("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: \(size)\r\n\r\n".utf8) + patternBytes(size)
            let connection = try server.connect()
            let sending = sendInBackground(connection, request)
            let response = try connection.readResponse()
            #expect(response.status == 422)
            #expect(response.closes)
            #expect(connection.isClosedByPeer())
            sending.wait()
            let sink = try #require(server.responder.sinks.first)
            #expect(await eventually { sink.snapshot.aborted })
            #expect(!sink.snapshot.finished)
            await server.stop()
        }

        @Test("a client that disconnects mid-body aborts the sink", arguments: [false, true])
        func clientGoneMidBody(reset: Bool) async throws {
            let server = try TestServer()
            var connection: RawHTTPConnection? = try server.connect()
            connection?.send(Array("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n".utf8) + patternBytes(5000))
            #expect(await eventually { server.responder.sinks.first?.snapshot.bytes == 5000 })
            if reset { connection?.setResetOnClose() }
            connection = nil
            let sink = try #require(server.responder.sinks.first)
            #expect(await eventually { sink.snapshot.aborted })
            #expect(!sink.snapshot.finished)
            #expect(await eventually { server.server.openConnections == 0 })
            await server.stop()
        }

        // http-decisions.md: a body read timeout.
        @Test("a body that stops arriving is cut off after the body timeout")
        func bodyTimeout() async throws {
            let server = try TestServer(idleTimeout: 30_000, bodyTimeout: 1000)
            let connection = try server.connect()
            connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
            // Without a body timeout nothing would arrive and the read would time out instead of seeing EOF.
            let (bytes, closed) = connection.readUntilClose(timeout: 5)
            #expect(closed)
            #expect(!String(decoding: bytes, as: UTF8.self).contains("200 OK"))
            await server.stop()
        }

        // Issue 12 item 7: a body that trickles is cut, not held for as long as it keeps trickling.
        @Test("a body slower than the minimum rate is cut with 408 and the connection closed")
        func trickledBody() async throws {
            let server = try TestServer(idleTimeout: 30_000, bodyMinimumRate: 1000, bodyRateWindow: 300)
            let connection = try server.connect()
            connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10000\r\n\r\n")
            var answer: [UInt8] = []
            let started = Date()
            // 10 bytes every 50 ms: 200 bytes a second against a minimum of 1,000.
            while answer.isEmpty, Date().timeIntervalSince(started) < 10 {
                connection.send(patternBytes(10))
                answer = connection.readSome(timeout: 0.05) ?? []
            }
            let text = String(decoding: answer, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(text.prefix(60))")
            #expect(Date().timeIntervalSince(started) < 5)
            #expect(connection.isClosedByPeer(timeout: 5))
            await server.stop()
        }
    }
}
