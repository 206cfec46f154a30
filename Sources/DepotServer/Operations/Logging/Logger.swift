/// Writes Depot's log lines (operations.md §2) in the configured format, each with its time and, while a request
/// is being handled, that request's ID. Libraries take one; nothing global.
///
/// A request's work logs through `logger.with(requestID:)`, so every line it causes carries its ID, also from
/// work that continues off the event loop. Messages never hold a token, a receipt, a key or a password.
public struct Logger: Sendable {
    public let output: LogOutput
    public let format: LogFormat
    /// The request whose handling this logger serves, if any.
    public let requestID: String?

    public init(output: LogOutput = .standardError, format: LogFormat = .text, requestID: String? = nil) {
        self.output = output
        self.format = format
        self.requestID = requestID
    }

    /// The same logger, for the lines of request `requestID`.
    public func with(requestID: String?) -> Logger {
        Logger(output: output, format: format, requestID: requestID)
    }

    public func log(_ level: LogLevel, _ event: LogEvent, _ message: String) {
        output.write(LogLine.render(format: format, level: level, event: event, requestID: requestID, message: message))
    }

    public func debug(_ event: LogEvent, _ message: String) { log(.debug, event, message) }
    public func info(_ event: LogEvent, _ message: String) { log(.info, event, message) }
    public func warning(_ event: LogEvent, _ message: String) { log(.warning, event, message) }
    public func error(_ event: LogEvent, _ message: String) { log(.error, event, message) }

    /// The access line of a finished request.
    func request(remote: String, method: String, path: String, status: Int, bytes: Int64, durationMilliseconds: Double) {
        output.write(LogLine.request(format: format, requestID: requestID, remote: remote, method: method, path: path,
                                     status: status, bytes: bytes, durationMilliseconds: durationMilliseconds))
    }
}
