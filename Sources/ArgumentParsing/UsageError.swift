/// A mistake in how a command was called (unknown option, missing value, bad value of a command's own
/// option): one line on stderr, exit status 64.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
