/// A mistake in how a command was called (unknown option, missing value, bad value of a command's own
/// option): one line on stderr, exit status 64.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// The one line printed after `depot: COMMAND: `.
    public let description: String

    /// A usage error with its message.
    public init(_ description: String) {
        self.description = description
    }
}
