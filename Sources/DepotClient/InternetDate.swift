import Foundation

/// RFC 3339 timestamps as the server writes them (`2026-11-30T02:33:58Z`), fractional seconds tolerated.
enum InternetDate {
    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

extension KeyedDecodingContainer {
    /// An optional RFC 3339 date; a present but unreadable value is a decoding error.
    func decodeInternetDate(forKey key: Key) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = InternetDate.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an RFC 3339 date: \(text)")
        }
        return date
    }
}

extension KeyedEncodingContainer {
    /// An optional date as RFC 3339 text (`null` when absent).
    mutating func encodeInternetDate(_ date: Date?, forKey key: Key) throws {
        try encode(date.map(InternetDate.format), forKey: key)
    }
}
