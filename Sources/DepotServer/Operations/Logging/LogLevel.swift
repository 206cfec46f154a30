/// The severity of a log line (operations.md §2).
public enum LogLevel: String, Sendable, CaseIterable {
    case debug
    case info
    case warning
    case error
}
