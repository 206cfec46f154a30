import COpenSSL

/// A libcrypto operation failed. `reason` carries OpenSSL's own error text when it gave one.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// What we were doing, e.g. "parse certificate".
    public let operation: String
    /// OpenSSL's error queue, joined, or a reason of our own.
    public let reason: String

    /// Creates an error with an explicit reason.
    public init(operation: String, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    /// Drains this thread's OpenSSL error queue into an error (so that no stale entry leaks into
    /// the next operation on the same thread).
    static func drainingQueue(_ operation: String) -> CryptoError {
        CryptoError(operation: operation, reason: OpenSSLErrorQueue.drain() ?? "unknown libcrypto error")
    }

    public var description: String { "\(operation): \(reason)" }
}

/// This thread's OpenSSL error queue.
enum OpenSSLErrorQueue {
    /// Returns every queued error as one string (nil if the queue was empty) and empties the queue.
    static func drain() -> String? {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? nil : messages.joined(separator: "; ")
    }

    /// Empties the queue.
    static func clear() { ERR_clear_error() }
}
