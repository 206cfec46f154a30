/// A command's own option: a flag only (`depot publish --pack ID`), never read from the environment.
///
///     @Option("pack", help: "the pack the token opens", valueName: "ID") var pack: String      // required
///     @Option("ttl", .integer(in: 1...31_536_000), help: "lifetime in seconds") var ttl: Int?  // optional
///     @Option("chunk-size", .integer(in: 1...Int64.max), help: "chunk size") var chunkSize: Int64 = 1_048_576
///     @Option("transaction", help: "a JWS file; may be repeated") var transactions: [String] = []
///
/// A property without a default is required. A value that does not parse is a ``UsageError`` (exit 64).
@propertyWrapper
public struct Option<Value: Sendable>: Sendable, OptionContainer {
    private var value: Value?
    /// Name, help, parser and default, for the parser and `--help`.
    public let declaration: OptionDeclaration

    /// The parsed value (or the default). Reading a required option outside a parse is a programming error.
    public var wrappedValue: Value {
        get {
            guard let value else { preconditionFailure("\(declaration.flag) is required and was read before a parse") }
            return value
        }
        set { value = newValue }
    }

    /// An option with a default and an explicit parser.
    public init(wrappedValue: Value, _ name: String, _ parser: OptionParser<Value>, help: String, valueName: String? = nil,
                defaultText: String? = nil) {
        declaration = OptionDeclaration(name: name, readsEnvironment: false, help: help, valueName: valueName, parser: parser,
                                        defaultValue: wrappedValue, defaultText: defaultText, isRequired: false)
        value = ParsedValues.value(for: name, as: Value.self) ?? wrappedValue
    }

    /// An option with a default, whose type brings its parser.
    public init(wrappedValue: Value, _ name: String, help: String, valueName: String? = nil, defaultText: String? = nil)
    where Value: OptionValue {
        self.init(wrappedValue: wrappedValue, name, Value.optionParser, help: help, valueName: valueName, defaultText: defaultText)
    }

    /// A required option.
    public init(_ name: String, _ parser: OptionParser<Value>, help: String, valueName: String? = nil) {
        declaration = OptionDeclaration(name: name, readsEnvironment: false, help: help, valueName: valueName, parser: parser,
                                        defaultValue: nil, defaultText: nil, isRequired: true)
        value = ParsedValues.value(for: name, as: Value.self)
    }

    /// A required option whose type brings its parser.
    public init(_ name: String, help: String, valueName: String? = nil) where Value: OptionValue {
        self.init(name, Value.optionParser, help: help, valueName: valueName)
    }

    /// An optional option (nil when not given).
    public init<Wrapped: Sendable>(wrappedValue: Value = nil, _ name: String, _ parser: OptionParser<Wrapped>, help: String,
                                   valueName: String? = nil, defaultText: String? = nil) where Value == Wrapped? {
        declaration = OptionDeclaration(name: name, readsEnvironment: false, help: help, valueName: valueName, parser: parser.optional,
                                        defaultValue: nil, defaultText: defaultText, isRequired: false)
        value = ParsedValues.value(for: name, as: Value.self) ?? wrappedValue
    }

    /// An optional option whose type brings its parser.
    public init<Wrapped: OptionValue>(wrappedValue: Value = nil, _ name: String, help: String, valueName: String? = nil,
                                      defaultText: String? = nil) where Value == Wrapped? {
        self.init(wrappedValue: wrappedValue, name, Wrapped.optionParser, help: help, valueName: valueName, defaultText: defaultText)
    }

    /// A repeatable option: each occurrence adds one value (`--transaction a.jws --transaction b.jws`).
    public init<Element: Sendable>(wrappedValue: Value = [], _ name: String, each parser: OptionParser<Element>, help: String,
                                   valueName: String? = nil) where Value == [Element] {
        declaration = OptionDeclaration(repeatable: name, help: help, valueName: valueName, parser: parser)
        value = ParsedValues.value(for: name, as: Value.self) ?? wrappedValue
    }

    /// A repeatable option whose element type brings its parser.
    public init<Element: OptionValue>(wrappedValue: Value = [], _ name: String, help: String, valueName: String? = nil)
    where Value == [Element] {
        self.init(wrappedValue: wrappedValue, name, each: Element.optionParser, help: help, valueName: valueName)
    }

    var declarations: [OptionDeclaration] { [declaration] }
}
