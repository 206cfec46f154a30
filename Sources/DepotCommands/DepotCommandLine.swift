package import ArgumentParsing
import Foundation

/// `depot`'s command table. A new command is one type conforming to `Command` and one line here; a
/// group of subcommands (`depot ledger copy|backup`) is `.group("ledger", summary: …, [.command(…), …])`.
package enum DepotCommandLine {
    /// Every command of `depot`, in `depot --help` order.
    package static let root: CommandNode = .group("depot", summary: "Product lists, purchases and content packs for in-app purchases.", [
        .command(ServeCommand.self), .command(CheckCommand.self), .command(PublishCommand.self), .command(RetireCommand.self),
        .command(UnretireCommand.self), .command(PruneCommand.self), .command(RollbackCommand.self), .command(PromoteCommand.self),
        .command(TokenCommand.self), .command(FetchCommand.self), .command(DemoCommand.self),
        .group("simulator", summary: SimulatorCommand.summary, default: SimulatorCommand.self, [
            .command(SimulatorReceiptCommand.self), .command(SimulatorRootCommand.self),
        ]),
        .group("deploy", summary: "Print what runs Depot in production (a systemd unit).", [.command(DeploySystemdCommand.self)]),
        .group("ledger", summary: "Copy a SQLite ledger into PostgreSQL, or back it up while the server runs.", [
            .command(LedgerCopyCommand.self), .command(LedgerBackupCommand.self),
        ]),
        .group("edge-config", summary: "Print the configuration of an edge in front of the instances.", [
            .command(EdgeConfigNginxCommand.self),
        ]),
        .group("purchases", summary: "What the ledger knows of purchases (the support view).", [.command(PurchasesShowCommand.self)]),
        .group("notifications", summary: "Catch up on App Store Server Notifications, or ask Apple for a test one.", [
            .command(NotificationSyncCommand.self), .command(NotificationTestCommand.self),
        ]),
    ])

    /// Runs the command `arguments` (without the program name) select, writing to stdout and stderr;
    /// returns the exit status.
    package static func run(_ arguments: [String], environment: [String: String]) async -> Int32 {
        await CommandLineRunner(root).run(arguments, environment: environment)
    }
}

/// A command that could not do its work: one line on stderr after `depot: COMMAND: `, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Writes a line to standard output at once (no stdio buffering, so lines keep their order with
/// progress output and reach a pipe immediately).
func say(_ text: String, terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((text + terminator).utf8))
}
