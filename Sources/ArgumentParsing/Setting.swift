/// A configuration setting: flag `--name` and environment variable `DEPOT_NAME` (the flag wins), with a
/// default. One declaration is the property, its flag, its variable, its parser, `--help` and its row of
/// the README's configuration table:
///
///     @Setting("port", .integer(in: 0...65535), help: "listen port", valueName: "PORT")
///     public var port = 8080
///     @Setting("account-policy", help: "a purchase presented by a second account")
///     public var accountPolicy = AccountPolicy.transfer
///
/// A value that does not parse is a ``ConfigurationError`` (exit status 1).
@propertyWrapper
public struct Setting<Value: Sendable>: Sendable, OptionContainer {
    /// The parsed value, or the default.
    public var wrappedValue: Value
    /// Name, variable, help, parser and default, for the parser, `--help` and the README.
    public let declaration: OptionDeclaration
    /// The value as text (what the flag would take), and the default's.
    private let format: @Sendable (Value) -> String
    private let defaultText: String

    /// A setting with an explicit parser.
    public init(wrappedValue: Value, _ name: String, _ parser: OptionParser<Value>, help: String, valueName: String? = nil,
                defaultText: String? = nil) {
        declaration = OptionDeclaration(name: name, readsEnvironment: true, help: help, valueName: valueName, parser: parser,
                                        defaultValue: wrappedValue, defaultText: defaultText, isRequired: false)
        format = { parser.format($0) }
        self.defaultText = parser.format(wrappedValue)
        self.wrappedValue = ParsedValues.value(for: name, as: Value.self) ?? wrappedValue
    }

    /// A setting whose type brings its parser (strings, integers, booleans, enumerations).
    public init(wrappedValue: Value, _ name: String, help: String, valueName: String? = nil, defaultText: String? = nil)
    where Value: OptionValue {
        self.init(wrappedValue: wrappedValue, name, Value.optionParser, help: help, valueName: valueName, defaultText: defaultText)
    }

    /// An optional setting (nil by default; empty text also means nil). `defaultText` says what nil means.
    public init<Wrapped: Sendable>(wrappedValue: Value = nil, _ name: String, _ parser: OptionParser<Wrapped>, help: String,
                                   valueName: String? = nil, defaultText: String = "none") where Value == Wrapped? {
        self.init(wrappedValue: wrappedValue, name, parser.optional, help: help, valueName: valueName, defaultText: defaultText)
    }

    /// An optional setting whose type brings its parser.
    public init<Wrapped: OptionValue>(wrappedValue: Value = nil, _ name: String, help: String, valueName: String? = nil,
                                      defaultText: String = "none") where Value == Wrapped? {
        self.init(wrappedValue: wrappedValue, name, Wrapped.optionParser.optional, help: help, valueName: valueName,
                  defaultText: defaultText)
    }

    var declarations: [OptionDeclaration] { [declaration] }

    var changedSettings: [SettingValue] {
        let text = format(wrappedValue)
        return text == defaultText ? [] : [SettingValue(declaration: declaration, text: text)]
    }
}

/// A setting whose value is not its default: the declaration and the value as its flag would take it.
public struct SettingValue: Sendable {
    public let declaration: OptionDeclaration
    public let text: String
}
