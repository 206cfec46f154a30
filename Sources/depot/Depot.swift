import DepotServer
import Foundation

/// One subcommand: its options, help and behaviour, declared together (`--help` comes from the same table).
protocol Command: SendableMetatype {
    static var name: String { get }
    static var synopsis: String { get }
    static var summary: String { get }
    static var options: [OptionSpec] { get }
    static var takesPositional: Bool { get }
    /// Returns the exit status.
    static func run(_ arguments: ParsedArguments) async -> Int32
}

/// A command as a value (a table of these avoids existential metatypes).
struct CommandEntry: Sendable {
    let name: String
    let synopsis: String
    let summary: String
    let options: [OptionSpec]
    let takesPositional: Bool
    let run: @Sendable (ParsedArguments) async -> Int32

    init<C: Command>(_ command: C.Type) {
        name = C.name
        synopsis = C.synopsis
        summary = C.summary
        options = C.options
        takesPositional = C.takesPositional
        run = { await C.run($0) }
    }
}

@main
struct Depot {
    static let commands: [CommandEntry] = [
        CommandEntry(ServeCommand.self), CommandEntry(CheckCommand.self), CommandEntry(PublishCommand.self),
        CommandEntry(RetireCommand.self), CommandEntry(PruneCommand.self), CommandEntry(TokenCommand.self),
        CommandEntry(FetchCommand.self), CommandEntry(DemoCommand.self),
    ]

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, !name.hasPrefix("-") else {
            if arguments.contains("--help") || arguments.contains("-h") {
                say(overview)
                exit(0)
            }
            fail(usage: "missing command (\(commands.map(\.name).joined(separator: ", ")))")
        }
        arguments.removeFirst()
        guard let command = commands.first(where: { $0.name == name }) else {
            fail(usage: "unknown command \"\(name)\" (\(commands.map(\.name).joined(separator: ", ")))")
        }
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentParser.parse(arguments, options: command.options,
                                              environment: ProcessInfo.processInfo.environment,
                                              positionalAllowed: command.takesPositional)
        } catch {
            fail(usage: "\(name): \(error)")
        }
        if parsed.wantsHelp {
            say(ArgumentParser.help(command: command.name, synopsis: command.synopsis, summary: command.summary,
                                      options: command.options), terminator: "")
            exit(0)
        }
        let status = await command.run(parsed)
        exit(status)
    }

    static var overview: String {
        var out = "usage: depot COMMAND [options]\n\ncommands:\n"
        for command in commands {
            out += "  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.summary + "\n"
        }
        out += "\n`depot COMMAND --help` lists a command's options."
        return out
    }

    /// A usage error: one line, exit 64.
    static func fail(usage message: String) -> Never {
        FileHandle.standardError.write(Data("depot: \(message)\n".utf8))
        exit(64)
    }

    /// Any other failure: one line, exit 1.
    static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("depot: \(message)\n".utf8))
        return 1
    }
}

/// Writes a line to standard output at once (no stdio buffering, so lines keep their order with
/// progress output and reach a pipe immediately).
func say(_ text: String, terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((text + terminator).utf8))
}
