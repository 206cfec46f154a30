import DepotTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTP
import Server
import Testing

extension ServerTests {
    @Suite("Engine: persistent connections, pipelining, HEAD, HTTP/1.0")
    struct PersistenceTests {
        @Test("several requests on one keep-alive connection")
        func keepAlive() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            for i in 0..<10 {
                connection.send(get("/remote?tag=keep"))
                let response = try connection.readResponse()
                #expect(response.status == 200, "request \(i)")
                #expect(!response.closes)
            }
            #expect(Set(server.responder.remoteAddresses(tag: "keep")).count == 1)
            #expect(server.responder.remoteAddresses(tag: "keep").count == 10)
            await server.stop()
        }

        // http-decisions.md: pipelined requests are answered in order. The /later request is answered after
        // 150 ms, off the loop; the synchronous /hello behind it must still come after it.
        @Test("pipelined requests, sent in one write, are answered in order")
        func pipelining() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            let requests = get("/hello") + get("/later?ms=150&tag=slow") + get("/remote?tag=p")
                + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody"
                + "HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n"
                + "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                + get("/later?ms=1&tag=fast") + get("/hello", "Connection: close\r\n")
            connection.send(requests)
            #expect(try connection.readResponse().text == "hello\n")
            #expect(try connection.readResponse().text == "later slow")
            #expect(try connection.readResponse().status == 200)
            #expect(try connection.readResponse().text == "body")
            let head = try connection.readResponse(isHead: true)
            #expect(head.header("Content-Length") == "6")
            #expect(try connection.readResponse().text == "abc")
            #expect(try connection.readResponse().text == "later fast")
            let last = try connection.readResponse()
            #expect(last.text == "hello\n")
            #expect(last.closes)
            #expect(connection.isClosedByPeer())
            await server.stop()
        }

        @Test("pipelined requests arriving one byte at a time are answered in order")
        func pipeliningByteByByte() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            let requests = Array((get("/later?ms=5&tag=1") + get("/hello") + get("/later?ms=5&tag=3")).utf8)
            for byte in requests { connection.send([byte]) }
            #expect(try connection.readResponse().text == "later 1")
            #expect(try connection.readResponse().text == "hello\n")
            #expect(try connection.readResponse().text == "later 3")
            await server.stop()
        }

        // RFC 9110 §9.3.2: HEAD gets the GET headers, including Content-Length, and no body.
        @Test("HEAD has the headers, Content-Length included, and no body", arguments: ["/hello", "/file"])
        func head(path: String) async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("HEAD \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
            let head = try connection.readResponse(isHead: true)
            #expect(head.status == 200)
            connection.send(get(path))
            let full = try connection.readResponse()
            #expect(head.header("Content-Length") == "\(full.body.count)")
            #expect(head.header("Content-Type") == full.header("Content-Type"))
            // Had HEAD carried a body, it would have been read as the start of the GET response.
            #expect(full.status == 200)
            #expect(full.body.count == (path == "/hello" ? 6 : 100_000))
            await server.stop()
        }

        // RFC 9110 §6.4.1 and http-decisions.md: 1xx, 204 and 304 responses have no body.
        @Test("204 and 304 are sent without a body or Content-Length, even when the application gave one",
              arguments: [204, 304])
        func noBodyStatuses(code: Int) async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send(get("/status?code=\(code)") + get("/hello"))
            let response = try connection.readResponse()
            #expect(response.status == code)
            #expect(response.header("Content-Length") == nil)
            #expect(response.body.isEmpty)
            #expect(try connection.readResponse().text == "hello\n", "the next response follows the head directly")
            await server.stop()
        }

        @Test("HTTP/1.0 is answered with Connection: close, then closed", arguments: ["", "Connection: keep-alive\r\n"])
        func http10(field: String) async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send("GET /hello HTTP/1.0\r\n\(field)\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.closes)
            #expect(connection.isClosedByPeer())
            await server.stop()
        }

        @Test("Connection: close from the client ends the connection after the response")
        func clientClose() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            connection.send(get("/hello", "Connection: close\r\n") + get("/hello"))
            let response = try connection.readResponse()
            #expect(response.closes)
            #expect(connection.isClosedByPeer(), "the second request is not answered")
            await server.stop()
        }

        @Test("a file body (sendfile) arrives whole and the connection stays usable")
        func fileBody() async throws {
            let server = try TestServer()
            let connection = try server.connect()
            for _ in 0..<3 {
                connection.send(get("/file"))
                let response = try connection.readResponse()
                #expect(response.body == patternBytes(100_000))
            }
            await server.stop()
        }

        @Test("pipelined file downloads to a slow reader (partial writes) stay in order and intact")
        func pipelinedFilesSlowReader() async throws {
            let server = try TestServer(writeTimeout: 5000)
            let connection = try server.connect()
            connection.setReceiveBuffer(64 * 1024)
            connection.send(get("/file") + "HEAD /file HTTP/1.1\r\nHost: t\r\n\r\n" + get("/file") + get("/hello") + get("/file"))
            usleep(100_000)   // slow on purpose: let the server run into a full socket
            #expect(try connection.readResponse().body == patternBytes(100_000))
            #expect(try connection.readResponse(isHead: true).header("Content-Length") == "100000")
            #expect(try connection.readResponse().body == patternBytes(100_000))
            #expect(try connection.readResponse().text == "hello\n")
            #expect(try connection.readResponse().body == patternBytes(100_000))
            await server.stop()
        }

        @Test("curl reuses one connection for several requests")
        func curlKeepAlive() async throws {
            let curl = try #require(ProcessRunner.which("curl"))
            let server = try TestServer()
            let url = server.baseURL + "/remote?tag=curl"
            let result = try await ProcessRunner.run(curl, ["-sS", "--max-time", "10", "-w", "%{http_code} %{num_connects}\\n",
                                                      "-o", "/dev/null", url, "-o", "/dev/null", url, "-o", "/dev/null", url])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == "200 1\n200 0\n200 0\n")
            let addresses = server.responder.remoteAddresses(tag: "curl")
            #expect(addresses.count == 3)
            #expect(Set(addresses).count == 1)
            await server.stop()
        }

        @Test("curl: HEAD, a file download, and a POST with a body")
        func curlRequests() async throws {
            let curl = try #require(ProcessRunner.which("curl"))
            let server = try TestServer()
            let head = try await ProcessRunner.run(curl, ["-sS", "-I", "--max-time", "10", server.baseURL + "/file"])
            #expect(head.stdout.lowercased().contains("content-length: 100000"))
            let echo = try await ProcessRunner.run(curl, ["-sS", "--max-time", "10", "--data-binary", "@-", server.baseURL + "/echo"],
                                             input: Data("posted by curl".utf8))
            #expect(echo.stdout == "posted by curl")
            await server.stop()
        }

        @Test("URLSession reuses one connection for several requests")
        func urlSessionKeepAlive() async throws {
            let server = try TestServer()
            let session = URLSession(configuration: .ephemeral)
            defer { session.invalidateAndCancel() }
            let url = try #require(URL(string: server.baseURL + "/remote?tag=urlsession"))
            for _ in 0..<3 {
                let (data, response) = try await session.data(from: url)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(String(decoding: data, as: UTF8.self).hasPrefix("127.0.0.1:"))
            }
            let addresses = server.responder.remoteAddresses(tag: "urlsession")
            #expect(addresses.count == 3)
            #expect(Set(addresses).count == 1)
            await server.stop()
        }
    }
}
