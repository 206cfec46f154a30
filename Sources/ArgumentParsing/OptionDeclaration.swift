import Foundation

/// Everything known about one option, whatever its value's type: the parser, `--help` and the README's
/// configuration table all read this.
public struct OptionDeclaration: Sendable {
    /// Kebab case without dashes: `account-policy` is given as `--account-policy`.
    public let name: String
    /// `DEPOT_ACCOUNT_POLICY` for a ``Setting``; nil for a command's own ``Option``.
    public let environmentName: String?
    /// One line, written as Markdown inline text (`` `0` `` for code); `--help` drops the backticks.
    public let help: String
    /// What follows the flag in `--help` (`PORT`, `transfer|first|shared`).
    public let valueName: String
    /// The default as `--help` and the README show it; nil when there is none to show.
    public let defaultText: String?
    /// `true` when ``defaultText`` is a value one could type (shown as code), `false` for a description
    /// (`none (admin API off)`).
    public let defaultIsValue: Bool
    /// The accepted words of an enumeration.
    public let allowedValues: [String]?
    /// May be given without a value (booleans).
    public let isSwitch: Bool
    /// May be given more than once; the values are collected in order.
    public let isRepeatable: Bool
    /// Must be given.
    public let isRequired: Bool
    let parseText: @Sendable (String) throws(InvalidOptionValue) -> any Sendable
    let parseList: @Sendable ([String]) throws(InvalidOptionValue) -> any Sendable

    init<Value: Sendable>(name: String, readsEnvironment: Bool, help: String, valueName: String?, parser: OptionParser<Value>,
                          defaultValue: Value?, defaultText: String?, isRequired: Bool) {
        self.name = name
        environmentName = readsEnvironment ? OptionDeclaration.environmentName(of: name) : nil
        self.help = help
        self.valueName = valueName ?? OptionDeclaration.valueName(of: name, parser.valueName, allowedValues: parser.allowedValues)
        if let defaultText {
            self.defaultText = defaultText
            defaultIsValue = false
        } else if let defaultValue {
            self.defaultText = parser.format(defaultValue)
            defaultIsValue = true
        } else {
            self.defaultText = nil
            defaultIsValue = false
        }
        allowedValues = parser.allowedValues
        isSwitch = parser.isSwitch
        isRepeatable = false
        self.isRequired = isRequired
        parseText = { (text: String) throws(InvalidOptionValue) -> any Sendable in try parser.parse(text) }
        parseList = { (texts: [String]) throws(InvalidOptionValue) -> any Sendable in try parser.parse(texts.last ?? "") }
    }

    /// A repeatable option: every occurrence is parsed and the values are collected into an array.
    init<Element: Sendable>(repeatable name: String, help: String, valueName: String?, parser: OptionParser<Element>) {
        self.name = name
        environmentName = nil
        self.help = help
        self.valueName = valueName ?? parser.valueName
        defaultText = nil
        defaultIsValue = false
        allowedValues = parser.allowedValues
        isSwitch = false
        isRepeatable = true
        isRequired = false
        parseText = { (text: String) throws(InvalidOptionValue) -> any Sendable in [try parser.parse(text)] }
        parseList = { (texts: [String]) throws(InvalidOptionValue) -> any Sendable in
            var values: [Element] = []
            for text in texts { values.append(try parser.parse(text)) }
            return values
        }
    }

    /// The parser's value name, except for an enumeration whose words do not fit in a short `a|b|c`: then
    /// the last word of the option's name (`--account-policy POLICY`), and `--help` lists the words.
    static func valueName(of name: String, _ parserValueName: String, allowedValues: [String]?) -> String {
        guard allowedValues != nil, parserValueName.count > 16 else { return parserValueName }
        return String(name.split(separator: "-").last ?? Substring(name)).uppercased()
    }

    /// `DEPOT_` and the name in upper snake case.
    public static func environmentName(of name: String) -> String {
        environmentPrefix + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Every setting's environment variable starts with this.
    public static let environmentPrefix = "DEPOT_"

    /// `--name`.
    public var flag: String { "--" + name }
}
