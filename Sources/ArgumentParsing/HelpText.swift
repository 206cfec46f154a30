/// `--help` texts, generated from the declarations the parser uses.
enum HelpText {
    /// A command: usage line, summary, then one line per option with its default and environment variable.
    static func command(_ entry: CommandEntry, path: [String]) -> String {
        let declarations = entry.declarations()
        let synopsis = entry.synopsis ?? derivedSynopsis(declarations, positional: entry.positionalName())
        var out = "usage: \(path.joined(separator: " ")) \(synopsis)\n\n\(plain(entry.summary))\n\noptions:\n"
        let lefts = declarations.map { "\($0.flag) \($0.valueName)" }
        let width = max(lefts.map(\.count).max() ?? 0, 6)
        for (declaration, left) in zip(declarations, lefts) {
            var line = "  " + left + String(repeating: " ", count: width - left.count + 2) + plain(declaration.help)
            if let allowed = declaration.allowedValues, declaration.valueName != allowed.joined(separator: "|") {
                line += ": " + allowed.joined(separator: ", ")
            }
            if declaration.isRequired { line += " (required)" }
            if let text = declaration.defaultText { line += " (default: \(plain(text)))" }
            if let variable = declaration.environmentName { line += " [\(variable)]" }
            out += line + "\n"
        }
        out += "  --help" + String(repeating: " ", count: width - 6 + 2) + "show this help\n"
        return out
    }

    /// A group: its subcommands, and the options of its own command if it has one.
    static func group(_ node: CommandNode, path: [String]) -> String {
        guard case .group(let children, let fallback) = node.kind else { return "" }
        let name = path.joined(separator: " ")
        var out = "usage: \(name) \(fallback == nil ? "COMMAND" : "[COMMAND]") [options]\n\n\(plain(node.summary))\n\ncommands:\n"
        let width = max(children.map(\.name.count).max() ?? 0, 8)
        for child in children {
            let more = child.children.isEmpty ? "" : " (\(child.children.map(\.name).joined(separator: ", ")))"
            out += "  " + child.name + String(repeating: " ", count: width - child.name.count + 2) + plain(child.summary) + more + "\n"
        }
        out += "\noptions:\n  --help" + String(repeating: " ", count: width - 6 + 2) + "show this help\n"
        out += "\n`\(name) COMMAND --help` lists a command's options.\n"
        if let fallback {
            out += "\nWithout a command:\n" + command(fallback, path: path)
        }
        return out
    }

    /// `--pack ID --product PRODUCT_ID [options] FILE|DIR...`: required options, then the rest.
    static func derivedSynopsis(_ declarations: [OptionDeclaration], positional: String?) -> String {
        var parts = declarations.filter(\.isRequired).map { "\($0.flag) \($0.valueName)" }
        if declarations.contains(where: { !$0.isRequired }) { parts.append("[options]") }
        if let positional { parts.append(positional) }
        return parts.joined(separator: " ")
    }

    /// Help texts are written as Markdown inline text for the README; a terminal shows them without backticks.
    static func plain(_ text: String) -> String {
        String(text.filter { $0 != "`" })
    }
}
