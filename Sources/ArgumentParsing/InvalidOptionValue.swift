/// Why a flag's or an environment variable's text is not a usable value, without the option's name
/// (the parser adds `--name: `).
public struct InvalidOptionValue: Error, Sendable, CustomStringConvertible {
    /// The reason, e.g. `"abc" is not an integer in 0...65535`.
    public let description: String

    /// A refusal with its reason.
    public init(_ description: String) {
        self.description = description
    }
}
