import Testing
import HTTP

@Suite("HTTP-date (RFC 9110 §5.6.7)")
struct HTTPDateTests {
    static let now2026: Int64 = 1_795_996_800  // 2026-11-30 00:00:00 UTC

    @Test("the three formats of RFC 9110 §5.6.7 name the same instant", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",   // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
        "Sun Nov  6 08:49:37 1994",        // asctime, day padded with a space
        "Sun Nov 06 08:49:37 1994",        // asctime, 2DIGIT day
        "  Sun, 06 Nov 1994 08:49:37 GMT\t",  // surrounding OWS ignored
        "Mon, 06 Nov 1994 08:49:37 GMT",   // day name not checked against the date
    ])
    func acceptedFormats(value: String) {
        #expect(HTTPDate.parse(value, relativeTo: Self.now2026) == 784_111_777)
    }

    @Test("formatting gives IMF-fixdate in GMT", arguments: [
        (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (2_147_483_648, "Tue, 19 Jan 2038 03:14:08 GMT"),  // one second past Int32
        (4_102_444_800, "Fri, 01 Jan 2100 00:00:00 GMT"),
        (32_503_680_000, "Wed, 01 Jan 3000 00:00:00 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (-62_135_596_800, "Mon, 01 Jan 0001 00:00:00 GMT"),
    ])
    func formatting(seconds: Int64, expected: String) {
        #expect(HTTPDate.format(seconds) == expected)
        #expect(HTTPDate.parse(expected) == seconds)
    }

    @Test("instants outside four-digit years are clamped when formatted")
    func clamping() {
        #expect(HTTPDate.format(Int64.max) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(Int64.min).hasSuffix("0000 00:00:00 GMT"))
    }

    @Test("format then parse round-trips across centuries")
    func roundTrip() {
        var t: Int64 = -2_208_988_800  // 1900
        while t < 7_258_118_400 {      // 2200
            #expect(HTTPDate.parse(HTTPDate.format(t)) == t)
            t += 86_400 * 37 + 3_671
        }
    }

    @Test("invalid values are nil", arguments: [
        "",
        "Sun, 06 Nov 1994 08:49:37 gmt",      // GMT is case-sensitive
        "Sun, 06 Nov 1994 08:49:37 UTC",      // only GMT
        "Sun, 06 Nov 1994 08:49:37",          // GMT required
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "sun, 06 Nov 1994 08:49:37 GMT",      // day name is case-sensitive
        "Sun, 06 nov 1994 08:49:37 GMT",      // month name is case-sensitive
        "Fun, 06 Nov 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",       // 2DIGIT day
        "Sun, 06 Nov 94 08:49:37 GMT",        // 4DIGIT year in IMF-fixdate
        "Sun,  06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 31 Apr 1994 08:49:37 GMT",      // no 31 April
        "Thu, 29 Feb 1900 00:00:00 GMT",      // 1900 is not a leap year
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT",  // a list of dates
        "Sun, 06 Nov 1994 08:49:37 GMTx",
        "Sunday, 06 Nov 1994 08:49:37 GMT",   // long name with date1
        "Sun, 06-Nov-94 08:49:37 GMT",        // short name with date2
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",            // asctime needs two characters for the day
        "Sun Nov  6 08:49:37 1994 GMT",
        "1994-11-06T08:49:37Z",
        "784111777",
    ])
    func invalid(value: String) {
        #expect(HTTPDate.parse(value, relativeTo: Self.now2026) == nil)
    }

    @Test("a leap second counts as the next minute's first second")
    func leapSecond() {
        #expect(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT") == 1_483_228_800)
    }

    @Test("years past 2038 parse in every format", arguments: [
        "Fri, 01 Jan 2100 00:00:00 GMT",
        "Fri Jan  1 00:00:00 2100",
    ])
    func past2038(value: String) {
        #expect(HTTPDate.parse(value) == 4_102_444_800)
    }

    @Test("RFC 850 two-digit years: more than 50 years ahead means the past century", arguments: [
        (now2026, "Sunday, 06-Nov-94 08:49:37 GMT", Int64(784_111_777)),        // 1994
        (now2026, "Sunday, 06-Nov-75 08:49:37 GMT", Int64(3_340_255_777)),      // 2075: within 50 years
        (now2026, "Sunday, 06-Nov-76 08:49:37 GMT", Int64(3_371_878_177)),      // 2076: 50 years ahead
        (now2026, "Sunday, 06-Nov-77 08:49:37 GMT", Int64(247_654_177)),        // 1977
        (Int64(3_786_912_000), "Sunday, 06-Nov-10 08:49:37 GMT", Int64(4_444_706_977)),  // in 2090, "10" is 2110
    ])
    func twoDigitYears(now: Int64, value: String, expected: Int64) {
        #expect(HTTPDate.parse(value, relativeTo: now) == expected)
    }

    @Test("RFC 850 without an explicit now reads the clock")
    func twoDigitYearWithClock() {
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
    }

    @Test("a Substring parses like a String")
    func substring() {
        let field = "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"
        let value = field[field.index(field.startIndex, offsetBy: 19)...]
        #expect(HTTPDate.parse(value) == 784_111_777)
    }
}
