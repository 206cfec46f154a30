import DepotTestSupport
import Foundation
import Testing

/// Issue 12 item 7: request bodies cannot pin memory without bound. 2,000 clients each start a 1 MiB
/// `POST /v1/receipts`, send almost all of it and stall. Measured on a `depot serve` child process (default body
/// budget, 64 MiB), so nothing else in the test process counts.
@Suite("Slow request bodies: bounded memory")
struct SlowBodyMemoryTests {
    static func status(_ pid: Int32, _ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        }
        return nil
    }

    @Test func twoThousandSlowBodiesStayWithinTheBudgetAndAreCut() async throws {
        let count = 2000
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < UInt(count + 1024) {
            limit.rlim_cur = min(limit.rlim_max, UInt(count + 1024))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let tree = TemporaryDirectory("slow-bodies")
        try await TestDepot.copySample(into: tree.path)
        // A body that makes no progress for the idle timeout (4 s here) is cut with 408.
        let arguments = ["serve", "--port", "0", "--access-log", "off", "--idle-timeout", "4", "--catalog", tree.path + "/catalog",
                         "--content", tree.path + "/content", "--data", tree.path + "/var"]
        let child = try SpawnedChild.start(ProcessRunner.depotExecutable, arguments)
        // Killed, not stopped: nothing of it is checked after the test, and the reap is then immediate.
        defer { child.send(SIGKILL); child.waitForExit() }
        var line = ""
        while !line.contains("\n"), let data = try child.output.read(upToCount: 1), !data.isEmpty {
            line += String(decoding: data, as: UTF8.self)
        }
        let port = try #require(Int(line.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").last ?? ""))
        let pid = child.pid

        let declared = 1 << 20
        let head = "POST /v1/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(declared)\r\n\r\n"
        // Warm up the path (a complete body that is not a receipt: 400).
        for _ in 0..<10 {
            let warm = try RawHTTPConnection(port: port)
            warm.send("POST /v1/receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            _ = try warm.readResponse()
        }
        try await Task.sleep(for: .milliseconds(300))
        let before = try #require(Self.status(pid, "VmRSS"))

        // Everything but the last 4 KiB of each body.
        let sent = Array(repeating: UInt8(ascii: " "), count: declared - 4096)
        let answers = try await OffPool.run { () -> [Int] in
            var connections: [RawHTTPConnection] = []
            for _ in 0..<count {
                let connection = try RawHTTPConnection(port: port)
                connection.send(head)
                connection.send(sent)
                connections.append(connection)
            }
            return connections.map { (try? $0.readResponse(timeout: 30))?.status ?? 0 }
        }
        let peak = try #require(Self.status(pid, "VmHWM"))
        let growth = peak - before
        let refused = answers.filter { $0 == 503 }.count
        let cut = answers.filter { $0 == 408 }.count
        print("[slow bodies] depot VmRSS \(before) KiB, peak \(peak) KiB (+\(growth / 1024) MiB) with \(count) bodies of 1 MiB; "
              + "\(refused) refused with 503 before their body was read, \(cut) cut with 408")
        // The budget (64 MiB) plus a few MB for 2,000 connections' own state.
        #expect(growth < 64 * 1024 + 12 * 1024, "peak growth \(growth) KiB")
        #expect(refused + cut == count, "every body was refused or cut: \(Set(answers))")
        // At most 64 bodies of 1 MiB fit at once (a few more are admitted once the first are cut).
        #expect(cut > 0 && refused >= count * 9 / 10)

        // The memory those bodies took goes back to the system.
        let returned = try await eventually(within: 10) {
            (Self.status(pid, "VmRSS") ?? .max) < before + 16 * 1024
        }
        #expect(returned, "VmRSS \(Self.status(pid, "VmRSS") ?? 0) KiB after the bodies were cut (before: \(before) KiB)")
        // Still answering.
        let fresh = try RawHTTPConnection(port: port)
        fresh.send("GET /products_v1.json HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try fresh.readResponse(timeout: 5).status == 200)
    }
}
