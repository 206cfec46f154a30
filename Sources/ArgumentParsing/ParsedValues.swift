/// The typed values a parse produced, handed to the option wrappers while the options type is built.
///
/// Options types are plain structs whose properties carry ``Setting``, ``Option``, ``Arguments`` and
/// ``OptionGroup`` wrappers. After the arguments are checked against the declarations, the parser builds
/// the type with its `init()` while these values are current: each wrapper's initializer takes its parsed
/// value instead of its default. Outside a parse (`DepotConfiguration()` in a test) nothing is current and
/// every property keeps its default.
struct ParsedValues: Sendable {
    /// Values by option name; the positional arguments under ``argumentsKey``.
    var values: [String: ParsedValue]

    /// The key of the positional arguments (no option is named with an empty string).
    static let argumentsKey = ""

    @TaskLocal static var current: ParsedValues?

    /// The current value of option `name`, if the parse produced one of type `Value`.
    static func value<Value>(for name: String, as type: Value.Type) -> Value? {
        current?.values[name]?.value as? Value
    }

    /// Only the named options (an ``OptionGroup`` that exposes part of a type).
    func restricted(to names: Set<String>?) -> ParsedValues {
        guard let names else { return self }
        return ParsedValues(values: values.filter { names.contains($0.key) })
    }
}

/// One parsed value, boxed (so an optional value that is nil still counts as given).
struct ParsedValue: @unchecked Sendable {
    // Only values produced by a parser of a Sendable type are stored.
    let value: Any
}
