import DepotWire

/// Renders one log line in either format (operations.md §2). Text: `TIME LEVEL [REQUEST-ID] message`; JSON: one
/// object with `time`, `level`, `event`, `requestId` (when there is one) and the line's own fields.
package enum LogLine {
    /// A line with a message.
    package static func render(format: LogFormat, level: LogLevel, event: LogEvent, requestID: String?, message: String,
                       time: String = LogTimestamp.now()) -> String {
        let message = sanitized(message)
        switch format {
        case .text:
            var line = time + " " + level.rawValue
            if let requestID { line += " [" + requestID + "]" }
            return line + " " + message
        case .json:
            var out = start(time: time, level: level, event: event, requestID: requestID)
            field("message", message, &out)
            out.append(UInt8(ascii: "}"))
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The access line of one request: who asked for what and how it went. `path` has no query (it may carry a
    /// token).
    static func request(format: LogFormat, requestID: String?, remote: String, method: String, path: String, status: Int,
                        bytes: Int64, durationMilliseconds: Double, time: String = LogTimestamp.now()) -> String {
        let path = sanitized(path)
        let duration = milliseconds(durationMilliseconds)
        switch format {
        case .text:
            var line = time + " info"
            if let requestID { line += " [" + requestID + "]" }
            return line + " \(remote) \(method) \(path) \(status) \(bytes) \(duration)ms"
        case .json:
            var out = start(time: time, level: .info, event: .request, requestID: requestID)
            field("remote", remote, &out)
            field("method", sanitized(method), &out)
            field("path", path, &out)
            number("status", String(status), &out)
            number("bytes", String(bytes), &out)
            number("durationMs", duration, &out)
            out.append(UInt8(ascii: "}"))
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Milliseconds with at most three decimals (`0.125`, `12`).
    package static func milliseconds(_ value: Double) -> String {
        let thousandths = Int64((max(0, value) * 1000).rounded())
        let whole = thousandths / 1000
        let fraction = thousandths % 1000
        guard fraction != 0 else { return String(whole) }
        var decimals = String(fraction)
        decimals = String(repeating: "0", count: 3 - decimals.count) + decimals
        while decimals.hasSuffix("0") { decimals.removeLast() }
        return "\(whole).\(decimals)"
    }

    /// Control characters never reach a log line (a path or a message cannot forge another line).
    static func sanitized(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }

    private static func start(time: String, level: LogLevel, event: LogEvent, requestID: String?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(200)
        out.append(UInt8(ascii: "{"))
        out.append(contentsOf: "\"time\":".utf8)
        JSONText.append(time, to: &out)
        field("level", level.rawValue, &out)
        field("event", event.rawValue, &out)
        if let requestID { field("requestId", requestID, &out) }
        return out
    }

    private static func field(_ name: String, _ value: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        JSONText.append(name, to: &out)
        out.append(UInt8(ascii: ":"))
        JSONText.append(value, to: &out)
    }

    private static func number(_ name: String, _ value: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        JSONText.append(name, to: &out)
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: value.utf8)
    }
}
