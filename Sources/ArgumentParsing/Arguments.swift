/// The positional arguments of a command (`depot publish ... FILE|DIR...`), in order. A command without
/// this property refuses positional arguments.
@propertyWrapper
public struct Arguments: Sendable, OptionContainer {
    /// The positional arguments, in order (empty outside a parse).
    public var wrappedValue: [String]
    /// What `--help` shows for them (`FILE|DIR...`).
    public let valueName: String

    /// Positional arguments shown as `valueName` in `--help`.
    public init(valueName: String) {
        self.valueName = valueName
        wrappedValue = ParsedValues.value(for: ParsedValues.argumentsKey, as: [String].self) ?? []
    }

    var declarations: [OptionDeclaration] { [] }
    var positionalName: String? { valueName }
}
