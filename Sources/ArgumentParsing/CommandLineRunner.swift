import Foundation

/// Runs a command table: finds the command the arguments name (through groups), prints `--help`, parses
/// the command's options and runs it, and turns every failure into one line on stderr and an exit status
/// (usage errors 64, configuration errors and other failures 1).
public struct CommandLineRunner: Sendable {
    /// The table: a group (`depot` and its commands) or a single command.
    public let root: CommandNode
    let standardOutput: @Sendable (String) -> Void
    let standardError: @Sendable (String) -> Void

    /// Exit status of a usage error (`EX_USAGE`).
    public static let usageStatus: Int32 = 64

    /// `standardOutput`/`standardError` receive whole texts (tests capture them; by default they are written
    /// to file descriptors 1 and 2 at once, without stdio buffering).
    public init(_ root: CommandNode,
                standardOutput: @escaping @Sendable (String) -> Void = CommandLineRunner.writeToStandardOutput,
                standardError: @escaping @Sendable (String) -> Void = CommandLineRunner.writeToStandardError) {
        self.root = root
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// Writes to file descriptor 1 at once.
    @Sendable public static func writeToStandardOutput(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Writes to file descriptor 2 at once.
    @Sendable public static func writeToStandardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Runs the command `arguments` (without the program name) select; returns the exit status.
    public func run(_ arguments: [String], environment: [String: String]) async -> Int32 {
        var node = root
        var path = [root.name]
        var rest = arguments
        while case .group(let children, let fallback) = node.kind {
            if let word = rest.first, !word.hasPrefix("-") {
                guard let child = children.first(where: { $0.name == word }) else {
                    return fail(path, "unknown command \"\(word)\" (\(Self.names(children)))")
                }
                node = child
                path.append(word)
                rest.removeFirst()
                continue
            }
            if Self.asksForHelp(rest) {
                standardOutput(HelpText.group(node, path: path))
                return 0
            }
            guard let fallback else { return fail(path, "missing command (\(Self.names(children)))") }
            return await execute(fallback, path: path, arguments: rest, environment: environment)
        }
        guard case .command(let entry) = node.kind else { return 0 }
        return await execute(entry, path: path, arguments: rest, environment: environment)
    }

    private func execute(_ entry: CommandEntry, path: [String], arguments: [String], environment: [String: String]) async -> Int32 {
        if Self.asksForHelp(arguments) {
            standardOutput(HelpText.command(entry, path: path))
            return 0
        }
        do {
            return try await entry.run(arguments, environment)
        } catch let error as UsageError {
            return fail(path, error.description)
        } catch let error as ConfigurationError {
            // Named by the option, as the server's start-up errors are: `depot: --port: …`.
            standardError("\(root.name): \(error)\n")
            return 1
        } catch {
            standardError("\(path.joined(separator: ": ")): \(error)\n")
            return 1
        }
    }

    private func fail(_ path: [String], _ message: String) -> Int32 {
        standardError("\(path.joined(separator: ": ")): \(message)\n")
        return Self.usageStatus
    }

    /// `--help` or `-h` before any `--`.
    static func asksForHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" || argument == "-h" { return true }
        }
        return false
    }

    static func names(_ nodes: [CommandNode]) -> String {
        nodes.map(\.name).joined(separator: ", ")
    }
}
