import ArgumentParsing
import DepotServer
import Ledger

/// `depot ledger copy`: a SQLite ledger into a PostgreSQL one (scale-out §1), so that a single instance can
/// grow into several. Idempotent: a second run adds nothing.
struct LedgerCopyCommand: Command {
    static let name = "copy"
    static let synopsis: String? = "--from sqlite[:PATH] --to postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME"
    static let summary = "Copy a SQLite ledger into an empty PostgreSQL ledger (running it again adds nothing twice)."

    @Option("from", help: "the SQLite ledger: `sqlite` (`<data>/ledger.sqlite`) or `sqlite:PATH`", valueName: "LEDGER")
    var source = LedgerLocation.sqlite(path: nil)
    @Option("to", help: "the PostgreSQL ledger (`postgres://...`)", valueName: "LEDGER")
    var target: LedgerLocation
    @OptionGroup(only: "data") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        guard source.backend == .sqlite else { throw UsageError("--from must be a SQLite ledger (sqlite or sqlite:PATH)") }
        guard target.backend == .postgres else { throw UsageError("--to must be a PostgreSQL ledger (postgres://...)") }
        let report: LedgerCopyReport
        do {
            report = try await Ledger.copy(from: source, to: target, dataDirectory: configuration.dataDirectory)
        } catch {
            throw CommandFailure(DepotApp.oneLine(error))
        }
        let shown = source.sqlitePath(dataDirectory: configuration.dataDirectory) ?? source.description
        if report.total == 0 {
            say("nothing to copy: \(target) already holds everything in \(shown)")
        } else {
            let counts = ["\(report.transactions) transactions", "\(report.bindings) account bindings",
                          "\(report.revocations) revocations", "\(report.notifications) notifications",
                          "\(report.settings) settings", "\(report.deliveries) delivery records", "\(report.outbox) outbox items"]
            say("copied \(shown) into \(target): " + counts.joined(separator: ", "))
        }
        return 0
    }
}

/// `depot ledger backup`: a consistent copy of a SQLite ledger, taken while a server keeps using it
/// (SQLite's online backup).
struct LedgerBackupCommand: Command {
    static let name = "backup"
    static let synopsis: String? = "--to FILE [--ledger sqlite[:PATH]] [--data DIR]"
    static let summary = "Back up a SQLite ledger to FILE while the server runs (a PostgreSQL ledger: use pg_dump)."

    @Option("to", help: "the backup file (replaced atomically)", valueName: "FILE")
    var destination: String
    @OptionGroup(only: "data", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        guard let path = configuration.ledger.sqlitePath(dataDirectory: configuration.dataDirectory) else {
            throw ConfigurationError(option: "ledger", "backup copies a SQLite ledger; back up a PostgreSQL ledger with pg_dump")
        }
        guard !destination.isEmpty else { throw UsageError("--to needs a file name") }
        do {
            try await Ledger.backup(configuration.ledger, dataDirectory: configuration.dataDirectory, to: destination)
        } catch {
            throw CommandFailure(DepotApp.oneLine(error))
        }
        say("backed up \(path) to \(destination)")
        return 0
    }
}
