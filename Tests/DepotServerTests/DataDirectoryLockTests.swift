import ArgumentParsing
import DepotTestSupport
import Foundation
import Testing
import DepotServer

/// Issue 11, defect 2: two servers on one SQLite `--data` directory disagreed (a refund taken by one was not
/// seen by the other). The second is now refused at start, with one line naming `--data` and pointing to the
/// PostgreSQL ledger.
@Suite("One server per SQLite data directory")
struct DataDirectoryLockTests {
    @Test func aSecondServerOnTheSameDataDirectoryIsRefused() async throws {
        let first = try await TestDepot.start()
        let other = TemporaryDirectory("lock-second")
        try await TestDepot.copySample(into: other.path)
        await #expect {
            _ = try await TestDepot.start(tree: other) { $0.dataDirectory = first.dataDirectory }
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.option == "data" && error.description.contains("in use by another depot serve (pid \(getpid()))")
                && error.description.contains("PostgreSQL") && !error.description.contains("\n")
        }
        // The first one serves on; once it stops, the directory can be served again.
        #expect(try await first.send("GET", "/products_v1.json").status == 200)
        await first.stop()
        let again = try await TestDepot.start(tree: other) { $0.dataDirectory = first.dataDirectory }
        #expect(try await again.send("GET", "/healthz").status == 200)
        await again.stop()
    }

    @Test func theCommandLineSaysSoInOneLineAndExitsOne() async throws {
        let tree = try await CommandLineServeTests.sampleTree()
        let serve = try ChildProcess(ProcessRunner.depotExecutable, ["serve", "--port", "0"] + CommandLineServeTests.quiet, directory: tree.path)
        let line = await serve.line(timeout: 30) { $0.hasPrefix("listening on") }
        #expect(line != nil, "\(serve.output.stderrText)")
        let second = try await ChildProcess.run(ProcessRunner.depotExecutable, ["serve", "--port", "0"] + CommandLineServeTests.quiet,
                                                directory: tree.path, timeout: 30)
        #expect(second.status == 1)
        let lines = second.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("depot: --data: ") && lines[0].contains("(pid \(serve.pid))"), "\(second.stderr)")
        let stopped = await serve.stop()
        #expect(stopped.status == 0)
    }
}
