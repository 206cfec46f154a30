/// Splits a command's arguments into flags and positional arguments: `--name value`, `--name=value`,
/// switches given alone (`--allow-sandbox`) or with a boolean word, `--` before arguments that start
/// with dashes. Knows the names, not the values' types.
struct ArgumentScanner {
    /// Texts given per option name, in order.
    var flags: [String: [String]] = [:]
    var positional: [String] = []
    var wantsHelp = false

    /// Words a switch takes as its value when they follow it.
    static let booleanWords: Set<String> = ["true", "false", "on", "off", "yes", "no", "1", "0"]

    static func scan(_ arguments: [String], declarations: [OptionDeclaration], takesPositional: Bool) throws(UsageError) -> ArgumentScanner {
        var scanned = ArgumentScanner()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" {
                scanned.wantsHelp = true
                continue
            }
            if argument == "--" {
                guard takesPositional || index == arguments.count else {
                    throw UsageError("unexpected argument \"\(arguments[index])\"")
                }
                scanned.positional.append(contentsOf: arguments[index...])
                break
            }
            guard argument.hasPrefix("--") else {
                guard takesPositional else { throw UsageError("unexpected argument \"\(argument)\"") }
                scanned.positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let declaration = declarations.first(where: { $0.name == name }) else {
                throw UsageError("unknown option --\(name)")
            }
            if value == nil {
                if declaration.isSwitch {
                    if index < arguments.count, booleanWords.contains(arguments[index].lowercased()) {
                        value = arguments[index]
                        index += 1
                    } else {
                        value = "true"
                    }
                } else {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
            }
            if scanned.flags[name] != nil && !declaration.isRepeatable {
                throw UsageError("--\(name) given more than once")
            }
            scanned.flags[name, default: []].append(value ?? "")
        }
        return scanned
    }
}
