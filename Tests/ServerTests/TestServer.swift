import DepotTestSupport
import Foundation
import HTTP
import Server
import Testing

/// Every engine test, run one at a time: several measure timeouts or the process's memory, and the machine
/// has few cores.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ServerTests {}

/// An `HTTPServer` on a free loopback port with short timeouts, serving `TestResponder`.
final class TestServer: @unchecked Sendable {
    let server: HTTPServer
    let responder: TestResponder
    let directory: TemporaryDirectory
    /// The loopback address it listens on.
    let host: String
    var port: Int { server.address.port }
    var baseURL: String { "http://\(host):\(port)" }

    /// `fileBytes` is the content served at `/file`; `sparseFileSize` instead makes `/file` a sparse file
    /// of that size (for downloads too large to buffer).
    /// `host`: another loopback address than 127.0.0.1 keeps out connections meant for other tests' servers (a
    /// port of a server that stopped, or one a test took as free, can be this one's next).
    init(host: String = "127.0.0.1", headerTimeout: UInt64 = 1000, idleTimeout: UInt64 = 1000, writeTimeout: UInt64 = 1000,
         bodyTimeout: UInt64? = nil, loops: Int = 2, limits: HTTPLimits = HTTPLimits(),
         fileBytes: [UInt8] = patternBytes(100_000), sparseFileSize: Int64? = nil,
         echoLimit: Int = 64 * 1024, shutdownGrace: UInt64 = 5000, bodyMinimumRate: Int = 1024, bodyRateWindow: UInt64 = 10_000,
         makeSink: @escaping @Sendable () -> CountingSink = { CountingSink() }) throws {
        self.host = host
        directory = TemporaryDirectory("server-tests")
        let path = directory.path + "/file.bin"
        if let sparseFileSize {
            directory.write("file.bin", [])
            try FileHandle(forWritingTo: URL(fileURLWithPath: path)).truncate(atOffset: UInt64(sparseFileSize))
        } else {
            directory.write("file.bin", fileBytes)
        }
        guard let file = OpenFile.open(path: path) else { throw RawHTTPConnection.Failure(description: "cannot open \(path)") }
        responder = TestResponder(file: FileRegion(file: file, offset: 0, length: file.size), echoLimit: echoLimit,
                                  makeSink: makeSink)
        let configuration = ServerConfiguration(
            host: host, port: 0, loopCount: loops, limits: limits, serverName: "depot", headerTimeoutMilliseconds: headerTimeout,
            idleTimeoutMilliseconds: idleTimeout, writeTimeoutMilliseconds: writeTimeout,
            bodyTimeoutMilliseconds: bodyTimeout, shutdownGraceMilliseconds: shutdownGrace,
            bodyMinimumBytesPerSecond: bodyMinimumRate, bodyRateWindowMilliseconds: bodyRateWindow)
        server = try HTTPServer(configuration: configuration, responder: responder)
    }

    func connect() throws -> RawHTTPConnection { try RawHTTPConnection(host: host, port: port) }

    /// Sends `text` on a new connection and reads one response.
    func exchange(_ text: String, isHead: Bool = false) throws -> RawResponse {
        let connection = try connect()
        connection.send(text)
        return try connection.readResponse(isHead: isHead)
    }

    /// Stops the server and waits for its loops to end.
    func stop() async {
        server.stop()
        await server.stopped()
    }
}

/// `GET <path>` with a Host field.
func get(_ path: String, _ extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: test\r\n\(extra)\r\n"
}

/// Polls `condition` up to `attempts` times, `intervalMilliseconds` apart; true once it holds.
func eventually(attempts: Int = 200, intervalMilliseconds: UInt32 = 10, _ condition: () -> Bool) -> Bool {
    for _ in 0..<attempts {
        if condition() { return true }
        usleep(intervalMilliseconds * 1000)
    }
    return condition()
}

/// ``eventually(attempts:intervalMilliseconds:_:)`` for async callers, which get this one: it waits with
/// `Task.sleep`, so polling never holds one of Swift's cooperative threads (two on a 2-core machine, shared by every
/// test of the process).
func eventually(attempts: Int = 200, intervalMilliseconds: UInt32 = 10, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<attempts {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(Int(intervalMilliseconds)))
    }
    return condition()
}

/// Resident memory of this process, in bytes (`VmRSS` of /proc/self/status).
func residentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.split(separator: " ").dropFirst().first ?? ""
        return (Int(digits) ?? 0) * 1024
    }
    return 0
}

extension RawHTTPConnection {
    /// Sets `SO_RCVBUF` (a small receive buffer makes a non-reading client stall the server sooner).
    func setReceiveBuffer(_ bytes: Int32) {
        var value = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Closes with a reset (`SO_LINGER` 0) instead of a FIN.
    func setResetOnClose() {
        var value = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }
}

extension RawResponse {
    /// `true` when the head says the connection ends here.
    var closes: Bool { header("Connection")?.lowercased() == "close" }
}
