import ArgumentParsing
import DepotCore
import DepotCrypto
import DepotTestSupport
import Foundation
import Synchronization
import Testing
import DepotServer
#if canImport(Glibc)
import Glibc
#endif

/// Issue 11, defects 4–8 and the CLI verbs of operations.md §1: what `depot fetch`, `depot token`,
/// `depot retire`/`unretire`/`prune` and `depot demo` say and how they exit.
@Suite("Command line: fetch, token, retire, prune, demo")
struct CommandLineOperationsTests {
    static var depot: String { ProcessRunner.depotExecutable }

    static func run(_ arguments: [String], in directory: String? = nil, timeout: Double = 120) async throws -> ProcessResult {
        try await ChildProcess.run(depot, arguments, directory: directory, timeout: timeout)
    }

    // MARK: - depot fetch

    @Test func fetchSaysWhichConnectionWasRefused() async throws {
        let closed = try RefusingPort()
        let out = TemporaryDirectory("fetch-refused")
        out.write("receipt.txt", "c29tZSByZWNlaXB0")
        for proof in [["--token", "t"], ["--receipt", out.path + "/receipt.txt"]] {
            let result = try await Self.run(["fetch", "--server", "http://127.0.0.1:\(closed.port)", "--pack", "level2", "--out", out.path] + proof)
            #expect(result.status == 1)
            #expect(result.stderr.contains("connection refused to 127.0.0.1:\(closed.port)"), "\(result.stderr)")
            #expect(!result.stderr.contains("The operation could not be completed"), "\(result.stderr)")
        }
    }

    @Test func fetchNeedsASchemeAndSaysSo() async throws {
        for server in ["127.0.0.1:8080", "localhost:8080", "ftp://127.0.0.1/"] {
            let result = try await Self.run(["fetch", "--server", server, "--token", "t", "--pack", "level2", "--out", "o"])
            #expect(result.status == 64)
            #expect(result.stderr == "depot: fetch: --server: \"\(server)\" needs http:// or https:// and a host, e.g. http://127.0.0.1:8080\n",
                    "\(result.stderr)")
        }
    }

    /// `--token` downloads with an operator token; Ctrl-C on a terminal ends the progress line, says that running
    /// again resumes, and running again does.
    @Test func fetchWithATokenAndCtrlCOnATerminal() async throws {
        let server = try await TestDepot.start { $0.accessLog = .off }
        defer { Task { await server.stop() } }
        try ClientLoopbackTests.publish(server, pack: "world", files: ["big.bin": SecureRandom.bytes(32 << 20)], chunkSize: 64 * 1024)
        let token = try ClientLoopbackTests.token(server, pack: "world")
        let out = server.tree.path + "/device"
        let arguments = ["fetch", "--server", server.baseURL, "--token", token, "--pack", "world", "--out", out, "--parallel", "1"]

        let terminal = try PseudoTerminal()
        let child = try ChildProcess(Self.depot, arguments, standardOutput: terminal.slave)
        terminal.closeSlave()
        // The terminal's reader thread sends Ctrl-C as soon as the bar is drawn (a test waiting on a loaded
        // machine could see the bar too late, after the whole pack).
        terminal.send(SIGINT, to: child.pid, whenDrawn: "\r[")
        #expect(await terminal.wait(timeout: 60) { $0.contains("\r[") }, "a progress bar on the terminal: \(terminal.text)")
        let ended = await child.finish(timeout: 60)
        _ = await terminal.wait(timeout: 10) { $0.contains("resume") }
        let screen = terminal.text
        #expect(ended.status == 130, "\(screen)\n\(ended.stderrText)")
        #expect(screen.contains("using an operator token for pack world"))
        // The redrawn line is ended before the message, which says what to do.
        let message = try #require(screen.range(of: "interrupted: "), "\(screen)")
        #expect(screen[..<message.lowerBound].unicodeScalars.last == "\n", "\(screen.suffix(300).debugDescription)")
        #expect(screen.contains("run the same command again to resume"))

        let again = try await Self.run(Array(arguments.dropLast(2)))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("resuming version 1"), "\(again.stdout)")
        #expect(again.stdout.contains("done: 1 files"))
    }

    // MARK: - depot token

    @Test func tokenRefusesAnUnknownPackAndAMissingKey() async throws {
        let tree = try await CommandLineServeTests.sampleTree()
        let key = try TokenKey.load(secret: nil, dataDirectory: tree.path + "/var")
        let unknown = try await Self.run(["token", "--pack", "nosuchpack"], in: tree.path)
        #expect(unknown.status == 1 && unknown.stdout.isEmpty)
        #expect(unknown.stderr.hasPrefix("depot: token: no pack \"nosuchpack\" in ./content"), "\(unknown.stderr)")

        let empty = tree.path + "/empty-dir"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let noKey = try await Self.run(["token", "--pack", "level2", "--data", empty], in: tree.path)
        #expect(noKey.status == 1 && noKey.stdout.isEmpty)
        #expect(noKey.stderr.hasPrefix("depot: --data: no token key at \(empty)/token.key"), "\(noKey.stderr)")
        #expect(noKey.stderr.contains("--token-secret"))
        #expect(!FileManager.default.fileExists(atPath: empty + "/token.key"), "no key invented")

        let good = try await Self.run(["token", "--pack", "level2"], in: tree.path)
        #expect(good.status == 0)
        let claims = try DownloadTokenAuthority(key: key).verify(good.stdout.trimmingCharacters(in: .newlines),
                                                                 now: Int64(Date().timeIntervalSince1970)).get()
        #expect(claims.pack == "level2")
        let secret = try await Self.run(["token", "--pack", "level3", "--data", empty, "--token-secret", String(repeating: "s", count: 32)],
                                        in: tree.path)
        #expect(secret.status == 0, "\(secret.stderr)")
    }

    // MARK: - retire, unretire, prune

    @Test func retireUnretireAndPruneOnTheCommandLine() async throws {
        let tree = try await CommandLineServeTests.sampleTree()
        let unknown = try await Self.run(["retire", "--product", "com.example.depot.nosuch"], in: tree.path)
        #expect(unknown.status == 1, "an unknown product is a failure, not a usage error")
        #expect(unknown.stderr == "depot: retire: no product \"com.example.depot.nosuch\" in the catalog\n", "\(unknown.stderr)")
        #expect(try await Self.run(["unretire", "--product", "com.example.depot.nosuch"], in: tree.path).status == 1)

        #expect(try await Self.run(["retire", "--product", "com.example.depot.level2"], in: tree.path).status == 0)
        #expect(tree.read("catalog/products.json").map { String(decoding: $0, as: UTF8.self).contains("\"retired\"") } == true)
        let live = try await Self.run(["unretire", "--product", "com.example.depot.level2"], in: tree.path)
        #expect(live.status == 0 && live.stdout == "com.example.depot.level2 is live\n")
        #expect(tree.read("catalog/products.json").map { String(decoding: $0, as: UTF8.self).contains("\"retired\"") } == false)

        let source = tree.path + "/level2.bin"
        for version in 2...3 {
            try Data(SecureRandom.bytes(2000 + version)).write(to: URL(fileURLWithPath: source))
            let published = try await Self.run(["publish", "--pack", "level2", "--product", "com.example.depot.level2", "--type", "non-consumable",
                                                "--title", "Level 2", source], in: tree.path)
            #expect(published.status == 0, "\(published.stderr)")
        }
        let dry = try await Self.run(["prune", "--keep", "1", "--pack", "level2", "--dry-run"], in: tree.path)
        #expect(dry.status == 0)
        #expect(dry.stdout.hasPrefix("would remove level2/2 ("), "\(dry.stdout)")
        #expect(dry.stdout.contains("level2/1 ("))
        #expect(FileManager.default.fileExists(atPath: tree.path + "/content/level2/1"))
        let other = try await Self.run(["prune", "--keep", "1", "--pack", "level3"], in: tree.path)
        #expect(other.stdout == "nothing to prune\n")
        let unknownPack = try await Self.run(["prune", "--keep", "1", "--pack", "nosuch"], in: tree.path)
        #expect(unknownPack.status == 1 && unknownPack.stderr.contains("no pack \"nosuch\""))
        let real = try await Self.run(["prune", "--keep", "2"], in: tree.path)
        #expect(real.status == 0 && real.stdout.hasPrefix("removed level2/1 ("), "\(real.stdout)")
        #expect(!FileManager.default.fileExists(atPath: tree.path + "/content/level2/1"))
    }

    // MARK: - depot demo

    /// The demo's numbers tell one story, and it runs on its own fresh shop whatever the current directory
    /// holds (here: a catalog where Level 5 was published already).
    @Test func theDemoIsTheSameStoryFromAnyDirectory() async throws {
        let tree = try await CommandLineServeTests.sampleTree()
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: tree.path + "/five.bin"))
        #expect(try await Self.run(["publish", "--pack", "level5", "--product", "com.example.depot.level5", "--type", "non-consumable",
                                    "--title", "Level 5", tree.path + "/five.bin"], in: tree.path).status == 0)
        let result = try await Self.run(["demo"], in: tree.path, timeout: 180)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let text = result.stdout
        #expect(text.contains("published pack level5 version 1 "), "\(text)")
        let interrupted = try #require(text.firstMatch(of: /interrupted after (\d+) of (\d+) bytes/), "\(text)")
        let resumed = try #require(text.firstMatch(of: /resumed with (\d+) of (\d+) bytes already verified; fetched the other (\d+);/), "\(text)")
        #expect(interrupted.1 == resumed.1, "the bytes kept at the interruption are the bytes the resume starts from")
        #expect(interrupted.2 == resumed.2)
        #expect(Int(resumed.1)! + Int(resumed.3)! == Int(resumed.2)!)
        #expect(Int(interrupted.1)! > 0 && Int(interrupted.1)! < Int(interrupted.2)!)
        #expect(text.contains("stages/index.json"))
        let second = try await Self.run(["demo"], timeout: 180)
        #expect(second.status == 0 && second.stdout.contains("published pack level5 version 1 "))
    }
}

/// A pseudo-terminal for a child's stdout: the child sees a terminal (`isatty`), the test reads what it draws.
final class PseudoTerminal: Sendable {
    private let master: Int32
    private let screen = Mutex<[UInt8]>([])
    /// A signal to send to a process once the screen shows a text (checked by the reader thread).
    private let trigger = Mutex<(signal: Int32, pid: Int32, text: String)?>(nil)
    /// The child's side.
    let slave: FileHandle

    init() throws {
        // posix_openpt, unlockpt and ptsname by hand (Glibc does not export them to Swift): /dev/ptmx, then
        // TIOCSPTLCK to unlock and TIOCGPTN for the number of the slave under /dev/pts.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw RawHTTPConnection.Failure(description: "no pseudo-terminal")
        }
        let name = "/dev/pts/\(number)"
        let fd = open(name, O_RDWR | O_NOCTTY)
        guard fd >= 0 else { throw RawHTTPConnection.Failure(description: "cannot open \(name)") }
        slave = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        let master = self.master
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                screen.withLock { $0 += buffer[0..<n] }
                fireTrigger()
            }
        }.start()
    }

    /// Sends `signal` to `pid` from the reader thread as soon as the screen shows `text` (at once if it does).
    func send(_ signal: Int32, to pid: Int32, whenDrawn text: String) {
        trigger.withLock { $0 = (signal, pid, text) }
        fireTrigger()
    }

    private func fireTrigger() {
        trigger.withLock { pending in
            guard let armed = pending, text.contains(armed.text) else { return }
            kill(armed.pid, armed.signal)
            pending = nil
        }
    }

    /// Closes this process's copy of the child's side (so reading ends when the child exits).
    func closeSlave() { try? slave.close() }

    /// Everything drawn so far.
    var text: String { String(decoding: screen.withLock { $0 }, as: UTF8.self) }

    /// Polls (without blocking a thread) until `condition` holds for the text, at most `timeout` seconds.
    func wait(timeout: Double, until condition: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if condition(text) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(text)
    }

    deinit { close(master) }
}
