package import Foundation

/// Apple's textual receipt dates, `2014-06-28 14:47:53 Etc/GMT` (the `*_date` fields next to `*_date_ms`).
/// Only UTC forms are read; the `*_pst` fields are never consulted.
package enum ReceiptDateText {
    private static let utcSuffixes = [" Etc/GMT", " Etc/UTC", " GMT", " UTC"]

    /// The date in `text`, or `nil` when it is not `yyyy-MM-dd HH:mm:ss` followed by a UTC zone name.
    package static func date(from text: String) -> Date? {
        guard let suffix = utcSuffixes.first(where: text.hasSuffix) else { return nil }
        let stamp = Array(text.utf8.dropLast(suffix.utf8.count))
        // yyyy-MM-dd HH:mm:ss
        guard stamp.count == 19, stamp[4] == UInt8(ascii: "-"), stamp[7] == UInt8(ascii: "-"),
              stamp[10] == UInt8(ascii: " "), stamp[13] == UInt8(ascii: ":"), stamp[16] == UInt8(ascii: ":"),
              let year = number(stamp[0..<4]), let month = number(stamp[5..<7]), let day = number(stamp[8..<10]),
              let hour = number(stamp[11..<13]), let minute = number(stamp[14..<16]),
              let second = number(stamp[17..<19]),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (civil-from-days, inverted).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
