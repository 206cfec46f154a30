/// The README's configuration table, rendered from the same declarations as the parser and `--help`
/// (a test compares it with the README, so the two cannot drift apart).
public enum ConfigurationTable {
    /// `| flag | environment | default | meaning |` and one row per declaration, each line ending in a newline.
    public static func markdown(_ declarations: [OptionDeclaration]) -> String {
        var out = "| flag | environment | default | meaning |\n|---|---|---|---|\n"
        for declaration in declarations {
            let environment = declaration.environmentName.map { "`\($0)`" } ?? ""
            let defaultText = declaration.defaultText.map { declaration.defaultIsValue ? "`\($0)`" : $0 } ?? ""
            var meaning = declaration.help
            if let allowed = declaration.allowedValues {
                meaning += ": " + allowed.map { "`\($0)`" }.joined(separator: ", ")
            }
            out += "| `\(declaration.flag)` | \(environment) | \(defaultText) | \(meaning) |\n"
        }
        return out
    }
}
