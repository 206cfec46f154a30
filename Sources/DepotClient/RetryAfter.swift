package import Foundation

/// Reads a `Retry-After` field.
package enum RetryAfter {
    /// The delay in seconds, never negative; nil when the field is neither form.
    ///
    /// RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`.
    package static func seconds(_ field: String, now: Date) -> TimeInterval? {
        let text = field.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy(\.isASCIIDigit) {
            return TimeInterval(text) ?? nil
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// RFC 9110 §5.6.7: IMF-fixdate, with the obsolete RFC 850 and asctime forms accepted.
    static func httpDate(_ text: String) -> Date? {
        let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
