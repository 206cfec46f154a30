/// Why a flag's or an environment variable's text is not a usable value, without the option's name
/// (the parser adds `--name: `).
public struct InvalidOptionValue: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
