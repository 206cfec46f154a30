import DepotTestSupport
import Foundation
import Testing

/// Issue 2: 1,000 idle keep-alive connections cost little memory each (target ~20 KB). Measured on a
/// `depot serve` child process, so nothing else in the test process counts.
@Suite("Idle connection memory")
struct IdleConnectionMemoryTests {
    static func residentKiB(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        }
        return nil
    }

    @Test func thousandIdleConnectionsCostLittleEach() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(limit.rlim_max, 4096)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let tree = TemporaryDirectory("idle-memory")
        try await TestDepot.copySample(into: tree.path)
        let process = try SpawnedChild.start(ProcessRunner.depotExecutable, [
            "serve", "--port", "0", "--access-log", "off", "--catalog", tree.path + "/catalog",
            "--content", tree.path + "/content", "--data", tree.path + "/var"])
        defer { process.send(SIGTERM); process.waitForExit() }
        var line = ""
        while !line.contains("\n"), let data = try process.output.read(upToCount: 1), !data.isEmpty {
            line += String(decoding: data, as: UTF8.self)
        }
        let port = try #require(Int(line.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").last ?? ""))
        let request = "GET /products_v1.json HTTP/1.1\r\nHost: x\r\n\r\n"
        // Warm up the paths a connection takes.
        for _ in 0..<20 {
            let warm = try RawHTTPConnection(port: port)
            warm.send(request)
            _ = try warm.readResponse()
        }
        try await Task.sleep(for: .milliseconds(200))
        let before = try #require(Self.residentKiB(process.pid))
        var connections: [RawHTTPConnection] = []
        for _ in 0..<1000 {
            let connection = try RawHTTPConnection(port: port)
            connection.send(request)
            #expect(try connection.readResponse().status == 200)
            connections.append(connection)
        }
        let after = try #require(Self.residentKiB(process.pid))
        let perConnection = Double(after - before) * 1024 / 1000
        print("[idle] depot VmRSS \(before) KiB → \(after) KiB with 1,000 idle keep-alive connections: \(Int(perConnection)) bytes each")
        #expect(perConnection < 20 * 1024)
        // Still answering, new and old connections alike.
        let fresh = try RawHTTPConnection(port: port)
        fresh.send(request)
        #expect(try fresh.readResponse(timeout: 2).status == 200)
        connections[0].send(request)
        #expect(try connections[0].readResponse(timeout: 2).status == 200)
    }
}
