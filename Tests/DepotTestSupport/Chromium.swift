import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's headless Chromium driven through `chromedriver` (WebDriver), for the console's browser tests. When
/// `chromium` or `chromedriver` is missing and the process runs as root, Debian's `chromium` and `chromium-driver`
/// packages are installed with `apt-get`, as `.ci/run` does; the tests never skip for want of them.
public final class Chromium: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The driver's port on 127.0.0.1.
    public let port: Int
    var client: LoopbackJSONClient { LoopbackJSONClient(port: port) }
    private let pid: pid_t
    private let directory: TemporaryDirectory

    /// Installs Chromium when needed and starts `chromedriver` on a free loopback port.
    public static func start() async throws -> Chromium {
        let (_, driver) = try binaries()
        let directory = TemporaryDirectory("chromedriver")
        let log = directory.path + "/chromedriver.out"
        let pid = try SpawnedProcess.start(driver, ["--port=0", "--allowed-ips=127.0.0.1"], output: log)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: log, encoding: .utf8), let range = text.range(of: "started successfully on port ") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits) {
                    let chromium = Chromium(port: port, pid: pid, directory: directory)
                    try await chromium.waitUntilReady()
                    return chromium
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(pid, SIGKILL)
        _ = reap(pid)
        throw Failure("chromedriver did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    private init(port: Int, pid: pid_t, directory: TemporaryDirectory) {
        self.port = port
        self.pid = pid
        self.directory = directory
    }

    private func waitUntilReady() async throws {
        var last = "no answer"
        for _ in 0..<100 {
            do {
                let object = try await client.send("GET", "/status", timeout: 5) as? [String: Any]
                if (object?["value"] as? [String: Any])?["ready"] as? Bool == true { return }
                last = "\(String(describing: object))"
            } catch {
                last = "\(error)"
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure("chromedriver never said it was ready: \(last)")
    }

    /// Stops the driver (it ends the browsers of its sessions first when they were deleted).
    public func stop() async {
        kill(pid, SIGTERM)
        for _ in 0..<50 {
            if Self.reap(pid, block: false) { return }
            try? await Task.sleep(for: .milliseconds(100))
        }
        kill(pid, SIGKILL)
        _ = Self.reap(pid)
    }

    @discardableResult
    private static func reap(_ pid: pid_t, block: Bool = true) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, block ? 0 : WNOHANG) == pid
    }

    /// The paths of `chromium` and `chromedriver`, installing Debian's packages first when one is missing.
    public static func binaries() throws -> (browser: String, driver: String) {
        if let found = installed() { return found }
        guard getuid() == 0 else {
            throw Failure("chromium and chromedriver are not installed (apt-get install chromium chromium-driver); the console's browser tests need them")
        }
        let install = try SpawnedProcess.run("/bin/sh", ["-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver"])
        guard install.status == 0, let found = installed() else { throw Failure("installing chromium failed: \(install.output)") }
        return found
    }

    private static func installed() -> (browser: String, driver: String)? {
        let browsers: [String] = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"]
        let drivers: [String] = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
        let browser = browsers.first { FileManager.default.isExecutableFile(atPath: $0) }
        let driver = drivers.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let browser, let driver else { return nil }
        return (browser, driver)
    }
}
