import Glibc

/// The time on every log line: RFC 3339 in UTC with milliseconds, `2026-12-01T08:30:00.123Z` (operations.md §2).
package enum LogTimestamp {
    /// The current time.
    package static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return format(seconds: Int(spec.tv_sec), milliseconds: Int(spec.tv_nsec / 1_000_000))
    }

    /// `seconds` since 1970 plus `milliseconds` (0–999).
    package static func format(seconds: Int, milliseconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); out.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2); out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); out.append(UInt8(ascii: "."))
        digits(max(0, min(999, milliseconds)), 3); out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }
}
