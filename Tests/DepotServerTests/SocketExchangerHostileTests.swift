import DepotCommands
import DepotClient
import DepotTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import Testing

/// `depot fetch`'s HTTP client against a hostile server: every malformed or oversized framing is an error,
/// never a crash or an unbounded allocation.
@Suite struct SocketExchangerHostileTests {
    /// A loopback server that answers every request on a connection with `reply`, then closes.
    final class CannedServer: @unchecked Sendable {
        let fd: Int32
        let port: Int

        init(reply: [UInt8]) throws {
            let (listener, port) = try LoopbackSocket.bound(listening: 8)
            fd = listener
            self.port = port
            Thread.detachNewThread {
                while true {
                    let client = accept(listener, nil, nil)
                    if client < 0 { return }
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    _ = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                    _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    close(client)
                }
            }
        }

        func stop() { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
    }

    struct NoFallback: HTTPExchanger {
        func exchange(_ request: URLRequest) async throws -> (HTTPURLResponse, Data) { throw URLError(.unsupportedURL) }
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nx\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nx\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    ])
    func hostileFramingIsAnError(_ reply: String) async throws {
        let server = try CannedServer(reply: Array(reply.utf8))
        defer { server.stop() }
        let exchanger = SocketHTTPExchanger(fallback: NoFallback(), timeoutSeconds: 5)
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/file")!)
        await #expect(throws: (any Error).self) { _ = try await exchanger.exchange(request) }
    }

    @Test func aWellFramedBodyIsRead() async throws {
        let server = try CannedServer(reply: Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8))
        defer { server.stop() }
        let exchanger = SocketHTTPExchanger(fallback: NoFallback(), timeoutSeconds: 5)
        let (response, body) = try await exchanger.exchange(URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/file")!))
        #expect(response.statusCode == 200)
        #expect(body == Data("hello".utf8))
    }
}
