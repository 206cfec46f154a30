import DepotServer

/// A mistake in how a command was called: exit 64 with one line.
struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// Parsed arguments of one command.
struct ParsedArguments: Sendable {
    var values: OptionValues
    var positional: [String]
    var wantsHelp: Bool
    /// Options given explicitly (flag or environment), as opposed to defaults.
    var explicit: Set<String>
}

/// Parses `--name value`, `--name=value` and boolean switches; flags win over `DEPOT_*` variables, which win over defaults.
enum ArgumentParser {
    static func parse(_ arguments: [String], options: [OptionSpec], environment: [String: String],
                      positionalAllowed: Bool) throws(UsageError) -> ParsedArguments {
        var flags: [String: String] = [:]
        var positional: [String] = []
        var wantsHelp = false
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "--help" || argument == "-h" { wantsHelp = true; continue }
            if argument == "--" { positional.append(contentsOf: arguments[i...]); break }
            guard argument.hasPrefix("--") else {
                guard positionalAllowed else { throw UsageError(description: "unexpected argument \"\(argument)\"") }
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError(description: "unknown option --\(name)")
            }
            if value == nil {
                if spec.isBoolean {
                    if i < arguments.count, ["true", "false", "on", "off", "yes", "no", "1", "0"].contains(arguments[i].lowercased()) {
                        value = arguments[i]
                        i += 1
                    } else {
                        value = "true"
                    }
                } else {
                    guard i < arguments.count else { throw UsageError(description: "--\(name) needs a value") }
                    value = arguments[i]
                    i += 1
                }
            }
            if let existing = flags[name] {
                guard spec.repeatable else { throw UsageError(description: "--\(name) given more than once") }
                flags[name] = existing + "," + value!
            } else {
                flags[name] = value!
            }
        }
        var values: [String: String] = [:]
        var explicit = Set<String>()
        for spec in options {
            if let flag = flags[spec.name] {
                values[spec.name] = flag
                explicit.insert(spec.name)
            } else if spec.readsEnvironment, let env = environment[spec.environmentName] {
                values[spec.name] = env
                explicit.insert(spec.name)
            } else if let fallback = spec.defaultValue {
                values[spec.name] = fallback
            }
        }
        return ParsedArguments(values: OptionValues(values), positional: positional, wantsHelp: wantsHelp, explicit: explicit)
    }

    /// `--help` text generated from the same declarations the parser uses.
    static func help(command: String, synopsis: String, summary: String, options: [OptionSpec]) -> String {
        var out = "usage: depot \(command) \(synopsis)\n\n\(summary)\n\noptions:\n"
        let width = options.map { "--\($0.name) \($0.valueName)".count }.max() ?? 20
        for spec in options {
            let left = "--\(spec.name) \(spec.valueName)"
            var line = "  " + left + String(repeating: " ", count: max(1, width - left.count + 2)) + spec.help
            if let d = spec.defaultValue { line += " (default: \(d))" }
            if spec.readsEnvironment { line += " [\(spec.environmentName)]" }
            out += line + "\n"
        }
        out += "  --help" + String(repeating: " ", count: max(1, width - 4)) + "show this help\n"
        return out
    }
}
