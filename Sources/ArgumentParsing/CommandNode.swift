/// An entry of the command table: a command, or a group of subcommands (`depot ledger copy|backup`),
/// optionally with a command of its own for when no subcommand is named (`depot simulator`).
///
///     .group("depot", summary: "…", [
///         .command(ServeCommand.self),
///         .group("ledger", summary: "Copy and back up the ledger.", [.command(LedgerCopyCommand.self), …]),
///     ])
public struct CommandNode: Sendable {
    /// The word that selects it; for the root, the program name messages start with.
    public let name: String
    /// One sentence for the command list and `--help`.
    public let summary: String
    let kind: Kind

    enum Kind: Sendable {
        case command(CommandEntry)
        /// Subcommands, and the command run when none is named.
        case group([CommandNode], CommandEntry?)
    }

    /// A command; `prepare` adjusts it after parsing and before it runs (the dependencies a test
    /// harness injects).
    public static func command<C: Command>(_ type: C.Type, prepare: (@Sendable (inout C) -> Void)? = nil) -> CommandNode {
        CommandNode(name: C.name, summary: C.summary, kind: .command(CommandEntry(type, prepare: prepare)))
    }

    /// A group of subcommands. With `default`, the group's name alone (or followed by options) runs that command.
    public static func group<C: Command>(_ name: String, summary: String, default command: C.Type,
                                         _ children: [CommandNode]) -> CommandNode {
        CommandNode(name: name, summary: summary, kind: .group(children, CommandEntry(command, prepare: nil)))
    }

    /// A group of subcommands only.
    public static func group(_ name: String, summary: String, _ children: [CommandNode]) -> CommandNode {
        precondition(Set(children.map(\.name)).count == children.count, "\(name) lists a subcommand twice")
        return CommandNode(name: name, summary: summary, kind: .group(children, nil))
    }

    /// The subcommands of a group (empty for a command).
    public var children: [CommandNode] {
        if case .group(let children, _) = kind { return children }
        return []
    }
}

/// A command type as a value: what the runner needs to parse, describe and run it.
struct CommandEntry: Sendable {
    let synopsis: String?
    let summary: String
    let declarations: @Sendable () -> [OptionDeclaration]
    let positionalName: @Sendable () -> String?
    let run: @Sendable ([String], [String: String]) async throws -> Int32

    init<C: Command>(_ type: C.Type, prepare: (@Sendable (inout C) -> Void)?) {
        synopsis = C.synopsis
        summary = C.summary
        declarations = { C.declarations }
        positionalName = { C.positionalName }
        run = { arguments, environment in
            var command = try C.parse(arguments, environment: environment)
            prepare?(&command)
            return try await command.run()
        }
    }
}
