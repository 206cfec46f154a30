#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// HTTP-date parsing and formatting (RFC 9110 §5.6.7), as whole seconds since 1970-01-01 00:00:00 UTC.
///
/// Civil dates are computed arithmetically (proleptic Gregorian calendar), so years past 2038 and
/// before 1970 work and no `DateFormatter` or `Calendar` is involved.
///
/// Parsing decisions (the RFC leaves them open or states them as ABNF):
/// - All three formats are accepted: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
///   (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
/// - Day names, month names and `GMT` are case-sensitive, as the `%s"..."` rules of the ABNF say;
///   `GMT` is required in the first two formats (asctime has no zone and means UTC).
/// - The day name must be a valid name of the format, but is not checked against the date.
/// - The day of the month must exist (`31 Apr` and `29 Feb` of a common year are invalid); hours
///   are 00–23, minutes 00–59, seconds 00–60 (a leap second 60 counts as the next minute's 00).
/// - Leading and trailing SP / HTAB are ignored; anything else outside the grammar makes the value
///   invalid (`nil`), including a list of several dates.
/// - RFC 850 two-digit years: RFC 9110 §5.6.7 says a year that appears more than 50 years in the
///   future means the most recent past year with the same last two digits. Depot picks the one year
///   in the window (current year − 50, current year + 50] that ends in those digits, judged by year.
public enum HTTPDate {
    /// IMF-fixdate, RFC 850 and asctime (RFC 9110 §5.6.7); seconds since 1970-01-01 UTC; nil when invalid. Years past 2038 work.
    ///
    /// The clock is read only for an RFC 850 date (two-digit year); use
    /// ``parse(_:relativeTo:)`` to pass "now" explicitly.
    public static func parse(_ value: some StringProtocol) -> Int64? {
        parse(value, now: nil)
    }

    /// Like ``parse(_:)``, on a field value's bytes (no String made).
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var scanner = DateScanner(bytes: bytes, range: ASCIIBytes.trimmingWhitespace(bytes))
        return scanner.parse(now: nil)
    }

    /// Like ``parse(_:)``, with the current time given for the RFC 850 two-digit year rule.
    public static func parse(_ value: some StringProtocol, relativeTo now: Int64) -> Int64? {
        parse(value, now: now)
    }

    /// IMF-fixdate in GMT, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
    ///
    /// IMF-fixdate has a four-digit year: instants before 0000-01-01 or after 9999-12-31 23:59:59
    /// are clamped to those bounds.
    public static func format(_ secondsSince1970: Int64) -> String {
        let seconds = min(max(secondsSince1970, minimumSeconds), maximumSeconds)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civilDate(fromDays: days)
        let weekday = Int(floorModulo(days + 4, 7))  // 1970-01-01 was a Thursday (4).

        var out = [UInt8](repeating: 0, count: 29)
        let dayName = shortDayNames[weekday].utf8
        let monthName = monthNames[month - 1].utf8
        out.withUnsafeMutableBufferPointer { b in
            var i = 0
            for c in dayName { b[i] = c; i += 1 }
            b[3] = UInt8(ascii: ","); b[4] = ASCIIBytes.space
            writeDigits(day, count: 2, into: b, at: 5)
            b[7] = ASCIIBytes.space
            i = 8
            for c in monthName { b[i] = c; i += 1 }
            b[11] = ASCIIBytes.space
            writeDigits(Int(year), count: 4, into: b, at: 12)
            b[16] = ASCIIBytes.space
            writeDigits(secondOfDay / 3600, count: 2, into: b, at: 17)
            b[19] = ASCIIBytes.colon
            writeDigits(secondOfDay / 60 % 60, count: 2, into: b, at: 20)
            b[22] = ASCIIBytes.colon
            writeDigits(secondOfDay % 60, count: 2, into: b, at: 23)
            b[25] = ASCIIBytes.space
            b[26] = UInt8(ascii: "G"); b[27] = UInt8(ascii: "M"); b[28] = UInt8(ascii: "T")
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Calendar arithmetic

    /// Days since 1970-01-01 of a proleptic Gregorian date (month 1–12).
    static func days(year: Int64, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01.
    static func civilDate(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int64, month: Int) -> Int {
        switch month {
        case 2:
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return leap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }

    private static let minimumSeconds: Int64 = days(year: 0, month: 1, day: 1) * 86_400
    private static let maximumSeconds: Int64 = days(year: 10_000, month: 1, day: 1) * 86_400 - 1

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func floorModulo(_ a: Int64, _ b: Int64) -> Int64 {
        let r = a % b
        return r < 0 ? r + b : r
    }

    private static func writeDigits(_ value: Int, count: Int, into b: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var v = value
        var i = start + count - 1
        while i >= start {
            b[i] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
            v /= 10
            i -= 1
        }
    }

    // MARK: - Parsing

    static let shortDayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func parse(_ value: some StringProtocol, now: Int64?) -> Int64? {
        ASCIIBytes.withBytes(of: value) { buffer in
            var scanner = DateScanner(bytes: buffer, range: ASCIIBytes.trimmingWhitespace(buffer))
            return scanner.parse(now: now)
        }
    }

    /// Seconds since 1970 of "now", read from the system clock.
    static func currentSeconds() -> Int64 {
        Int64(time(nil))
    }
}

/// A cursor over the bytes of one HTTP-date.
private struct DateScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    let end: Int

    init(bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>) {
        self.bytes = bytes
        self.index = range.lowerBound
        self.end = range.upperBound
    }

    mutating func parse(now: Int64?) -> Int64? {
        // day-name: three letters (IMF-fixdate, asctime) or a full name (RFC 850).
        let nameStart = index
        while index < end, ASCIIBytes.isAlphanumeric(bytes[index]) { index += 1 }
        let name = nameStart..<index
        if name.count == 3, matches(name, in: HTTPDate.shortDayNames) != nil {
            if take(UInt8(ascii: ",")) { return imfFixdate() }
            if take(ASCIIBytes.space) { return asctime() }
            return nil
        }
        if matches(name, in: HTTPDate.longDayNames) != nil, take(UInt8(ascii: ",")) {
            return rfc850(now: now)
        }
        return nil
    }

    /// RFC 9110 §5.6.7: IMF-fixdate = day-name "," SP date1 SP time-of-day SP GMT; date1 = day SP month SP year.
    private mutating func imfFixdate() -> Int64? {
        guard take(ASCIIBytes.space), let day = digits(2), take(ASCIIBytes.space),
              let month = month(), take(ASCIIBytes.space), let year = digits(4), take(ASCIIBytes.space),
              let time = timeOfDay(), take(ASCIIBytes.space), takeGMT(), index == end
        else { return nil }
        return seconds(year: Int64(year), month: month, day: day, time: time)
    }

    /// RFC 9110 §5.6.7: rfc850-date = day-name-l "," SP date2 SP time-of-day SP GMT; date2 = day "-" month "-" 2DIGIT.
    private mutating func rfc850(now: Int64?) -> Int64? {
        guard take(ASCIIBytes.space), let day = digits(2), take(ASCIIBytes.hyphen),
              let month = month(), take(ASCIIBytes.hyphen), let twoDigitYear = digits(2), take(ASCIIBytes.space),
              let time = timeOfDay(), take(ASCIIBytes.space), takeGMT(), index == end
        else { return nil }
        // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future means the most recent
        // past year with the same last two digits.
        let nowSeconds = now ?? HTTPDate.currentSeconds()
        let currentYear = HTTPDate.civilDate(fromDays: HTTPDate.floorDivide(nowSeconds, 86_400)).year
        let century = currentYear - HTTPDate.floorModulo(currentYear, 100)
        var year = century + Int64(twoDigitYear)
        if year > currentYear + 50 {
            year -= 100
        } else if year <= currentYear - 50 {
            year += 100
        }
        return seconds(year: year, month: month, day: day, time: time)
    }

    /// RFC 9110 §5.6.7: asctime-date = day-name SP date3 SP time-of-day SP year; date3 = month SP ( 2DIGIT / ( SP DIGIT ) ).
    private mutating func asctime() -> Int64? {
        guard let month = month(), take(ASCIIBytes.space) else { return nil }
        let day: Int
        if take(ASCIIBytes.space) {
            guard let d = digits(1) else { return nil }
            day = d
        } else {
            guard let d = digits(2) else { return nil }
            day = d
        }
        guard take(ASCIIBytes.space), let time = timeOfDay(), take(ASCIIBytes.space),
              let year = digits(4), index == end
        else { return nil }
        return seconds(year: Int64(year), month: month, day: day, time: time)
    }

    private func seconds(year: Int64, month: Int, day: Int, time: Int64) -> Int64? {
        guard day >= 1, day <= HTTPDate.daysInMonth(year: year, month: month) else { return nil }
        return HTTPDate.days(year: year, month: month, day: day) * 86_400 + time
    }

    /// time-of-day = hour ":" minute ":" second, as seconds into the day.
    private mutating func timeOfDay() -> Int64? {
        guard let hour = digits(2), take(ASCIIBytes.colon), let minute = digits(2), take(ASCIIBytes.colon),
              let second = digits(2), hour < 24, minute < 60, second <= 60
        else { return nil }
        return Int64(hour * 3600 + minute * 60 + second)
    }

    /// A month name (1–12).
    private mutating func month() -> Int? {
        guard end - index >= 3, let m = matches(index..<(index + 3), in: HTTPDate.monthNames) else { return nil }
        index += 3
        return m + 1
    }

    private mutating func takeGMT() -> Bool {
        take(UInt8(ascii: "G")) && take(UInt8(ascii: "M")) && take(UInt8(ascii: "T"))
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < end, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Exactly `count` decimal digits.
    private mutating func digits(_ count: Int) -> Int? {
        guard end - index >= count else { return nil }
        var value = 0
        for _ in 0..<count {
            let b = bytes[index]
            guard ASCIIBytes.isDigit(b) else { return nil }
            value = value * 10 + Int(b &- 0x30)
            index += 1
        }
        return value
    }

    /// The index of the name in `names` equal (case-sensitively) to `bytes[range]`.
    private func matches(_ range: Range<Int>, in names: [String]) -> Int? {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        return names.firstIndex { $0.utf8.elementsEqual(slice) }
    }
}
