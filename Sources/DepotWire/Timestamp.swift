/// RFC 3339 timestamps in UTC, with whole seconds (`2026-11-30T02:33:58Z`), computed without Foundation.
public enum Timestamp {
    /// Formats seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ`.
    public static func rfc3339(_ seconds: Int64) -> String {
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (UTC only); nil otherwise.
    public static func parseRFC3339(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54 || b[10] == 0x74, b[13] == 0x3A, b[16] == 0x3A,
              b.last == 0x5A || b.last == 0x7A else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var n: Int64 = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                n = n * 10 + Int64(b[i] - 0x30)
            }
            return n
        }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
              let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19),
              (1...12).contains(mo), (1...daysInMonth(y, mo)).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        if b.count > 20 {
            guard b[19] == 0x2E, b.count > 21, number(20..<(b.count - 1)) != nil else { return nil }
        }
        return days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + s
    }

    /// 28...31 (February 29 in Gregorian leap years), so that `2026-02-31` is refused instead of becoming March 3.
    static func daysInMonth(_ year: Int64, _ month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's civil-date algorithms (public domain).
    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : (a - b + 1) / b
    }

    private static func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
