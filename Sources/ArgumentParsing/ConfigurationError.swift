/// A setting that cannot be used (a bad value, an unreadable directory, a port in use): start-up stops
/// with one line naming the option, exit status 1.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The option's name without dashes (`port`); empty when no single option is to blame.
    public let option: String
    /// What is wrong, as a phrase that follows `--name: `.
    public let message: String

    /// An error blamed on `--option`.
    public init(option: String, _ message: String) {
        self.option = option
        self.message = message
    }

    /// `--name: message`, the one line start-up prints.
    public var description: String { option.isEmpty ? message : "--\(option): \(message)" }
}
