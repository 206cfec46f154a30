public import Foundation

/// RFC 3339 times as the wire carries them: written in UTC with whole seconds (`2026-11-30T02:33:58Z`,
/// ``Timestamp``), read leniently (fractional seconds and offsets accepted).
public enum InternetDate {
    /// `date` in whole seconds (the fraction is dropped), UTC.
    public static func format(_ date: Date) -> String {
        Timestamp.rfc3339(Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// An RFC 3339 time, or nil.
    public static func parse(_ text: String) -> Date? {
        if let seconds = Timestamp.parseRFC3339(text), !text.contains(".") { return Date(timeIntervalSince1970: TimeInterval(seconds)) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
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
