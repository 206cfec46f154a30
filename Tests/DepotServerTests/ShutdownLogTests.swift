import DepotServer
import DepotTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// operations.md §2: every line `depot serve` writes to stderr, the ones about stopping included, is a log line
/// (text: the RFC 3339 time first; JSON: one object with `time`, `level`, `event` and `message` or the access
/// fields); and a download the 10 s drain limit cuts off still gets its access line.
@Suite struct ShutdownLogTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let format: String
        let signal: Int32
        var signalName: String { signal == SIGINT ? "SIGINT" : "SIGTERM" }
        var testDescription: String { "--log-format \(format), \(signalName)" }
    }

    static let rows = [Row(format: "json", signal: SIGTERM), Row(format: "json", signal: SIGINT),
                       Row(format: "text", signal: SIGTERM), Row(format: "text", signal: SIGINT)]

    /// The fields every JSON line has besides `time`, `level` and `event`: a message, or an access line's own.
    static let accessFields: Set<String> = ["requestId", "remote", "method", "path", "status", "bytes", "durationMs"]

    /// The real binary: one request, then the signal; every stderr line is a proper line of the format, the
    /// signal and the stop are logged (event `shutdown`), and `stopped` is the last line.
    @Test(arguments: rows)
    func everyStderrLineOfARunIsALogLine(_ row: Row) async throws {
        let tree = try await CommandLineServeTests.sampleTree()
        let (line, status, stderr) = try await OffPool.run { () -> (String?, Int32?, String) in
            let child = try ServeProcess(["serve", "--port", "0", "--log-format", row.format] + CommandLineServeTests.quiet,
                                         in: tree.path)
            let line = child.readLine(timeout: 60)
            if let port = line?.split(separator: ":").last.flatMap({ Int($0) }) {
                let connection = try RawHTTPConnection(port: port)
                connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try connection.readResponse()
            }
            let status = child.stop(signal: row.signal)
            return (line, status, child.stderr)
        }
        #expect(line?.hasPrefix("listening on ") == true)
        #expect(status == 0, "\(stderr)")
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast()
        #expect(stderr.hasSuffix("\n") && lines.count >= 3, "\(stderr)")
        var messages: [(event: String?, message: String)] = []
        for text in lines {
            if row.format == "json" {
                let object = try #require(try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
                #expect(ProductionLogTests.isTime(object["time"] as? String ?? ""), "\(text)")
                #expect(["debug", "info", "warning", "error"].contains(object["level"] as? String ?? ""), "\(text)")
                let event = try #require(object["event"] as? String, "\(text)")
                if event == "request" {
                    #expect(Set(object.keys) == Self.accessFields.union(["time", "level", "event"]), "\(text)")
                } else {
                    let message = try #require(object["message"] as? String, "\(text)")
                    messages.append((event, message))
                }
            } else {
                let record = try #require(LogRecord(text), "not a text log line: \(text)")
                if !record.isAccess { messages.append((nil, record.message)) }
            }
        }
        let signalLine = try #require(messages.first { $0.message.contains(row.signalName) }, "\(stderr)")
        #expect(signalLine.message.contains("finishing in-flight requests"))
        #expect(messages.last?.message == "stopped", "\(stderr)")
        if row.format == "json" {
            #expect(signalLine.event == "shutdown")
            #expect(messages.last?.event == "shutdown")
        }
    }

    /// In-process (the drain limit is the real 10 s): a client that stops reading a 12 MiB download, then the
    /// stop. The cut-off answer has its access line with the status sent and the body bytes written, and the
    /// cut-off itself is logged before `stopped`.
    @Test func aDownloadCutOffAtTheDrainLimitHasItsAccessLine() async throws {
        let fixture = try await PackFixture.start(extraFiles: PackFixture.hugeFiles(), configure: { $0.logFormat = .json })
        let target = fixture.fileURL(PackFixture.hugeFile)
        let stalled = try RawHTTPConnection(port: fixture.depot.port)
        stalled.limitReceiveBuffer(to: 16 * 1024)
        stalled.send("GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token())\r\n\r\n")
        // The answer has started (its head is here); the client reads no more, and stays connected.
        #expect(stalled.readSome(timeout: 30)?.isEmpty == false)
        let started = ContinuousClock.now
        await fixture.depot.stop()
        withExtendedLifetime(stalled) {}
        #expect(ContinuousClock.now - started >= .seconds(9), "the stop waited for the drain limit")
        let objects = try ProductionLogTests.objects(fixture.depot)
        let access = try #require(objects.first { $0["event"] as? String == "request" && $0["path"] as? String == target },
                                  "\(fixture.depot.logs.lines)")
        #expect(access["status"] as? Int == 200)
        let bytes = try #require(access["bytes"] as? Int)
        #expect(bytes > 0 && bytes < PackFixture.hugeSize, "\(access)")
        let shutdown = objects.filter { $0["event"] as? String == "shutdown" }.compactMap { $0["message"] as? String }
        #expect(shutdown == ["drain limit reached: closed 1 connection(s) still in flight", "stopped"], "\(fixture.depot.logs.lines)")
    }
}
