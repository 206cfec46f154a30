import Testing
import HTTP

private func r(_ offset: Int64, _ length: Int64) -> ByteRange { ByteRange(offset: offset, length: length) }

@Suite("Range evaluation (RFC 9110 §14, http-decisions.md \"Ranges\")")
struct ByteRangeSetTests {
    @Test("single ranges", arguments: [
        ("bytes=0-8", [r(0, 9)]),
        ("bytes=-10", [r(990, 10)]),                 // last 10 bytes
        ("bytes=990-", [r(990, 10)]),                // to the end
        ("bytes=990-5000", [r(990, 10)]),            // last-pos beyond the end is clamped
        ("bytes=-5000", [r(0, 1000)]),               // suffix larger than the file: the whole file, as a 206
        ("bytes=0-", [r(0, 1000)]),
        ("bytes=999-999", [r(999, 1)]),
        ("bytes=0-0", [r(0, 1)]),
        ("bytes=0-99999999999999999999", [r(0, 1000)]),  // saturates, then clamps
        ("bytes=-99999999999999999999", [r(0, 1000)]),
        ("Bytes=0-8", [r(0, 9)]),                    // the unit is case-insensitive
        ("BYTES=0-8", [r(0, 9)]),
        (" bytes=0-8\t", [r(0, 9)]),                 // OWS around the value
        ("bytes= 0-8 ", [r(0, 9)]),                  // OWS around list elements
        ("bytes=0-8,", [r(0, 9)]),                   // empty list elements
        ("bytes=,,0-8, ,", [r(0, 9)]),
    ])
    func single(value: String, expected: [ByteRange]) {
        #expect(ByteRangeSet.decide([value], size: 1000) == .partial(expected))
    }

    @Test("unsatisfiable: -0 and starts at or past the end", arguments: [
        "bytes=-0", "bytes=1000-", "bytes=1000-1000", "bytes=1000-2000", "bytes=5000-", "bytes=99999999999999999999-",
        "bytes=1000-,-0",
    ])
    func unsatisfiable(value: String) {
        #expect(ByteRangeSet.decide([value], size: 1000) == .unsatisfiable)
    }

    @Test("syntactically invalid → 416", arguments: [
        "bytes=abc", "bytes=7-1", "bytes=--6", "bytes=10", "bytes=1-2 3-4", "bytes=-", "bytes=1 -2", "bytes=1- 2",
        "bytes=0-8,abc", "bytes=0x10-", "bytes=+1-2", "bytes=1-2-3", "bytes=-1-2", "bytes=0-8;x",
        "bytes=5000-,abc",
    ])
    func invalid(value: String) {
        #expect(ByteRangeSet.decide([value], size: 1000) == .unsatisfiable)
    }

    @Test("ignored → full 200", arguments: [
        "bytes=",              // empty range set
        "bytes= , ,",
        "items=0-5",           // unknown unit
        "bytes",               // no "=": not a bytes range
        "bytes =0-5",          // no whitespace before "="
        "bytesx=0-5",
        "=0-5",
        "",
    ])
    func ignored(value: String) {
        #expect(ByteRangeSet.decide([value], size: 1000) == .full)
    }

    @Test("several satisfiable ranges, in request order", arguments: [
        ("bytes=0-0,-1", [r(0, 1), r(999, 1)]),
        ("bytes=500-599,0-99", [r(500, 100), r(0, 100)]),
        ("bytes=0-4,5-9", [r(0, 5), r(5, 5)]),      // adjacent is not overlapping
        ("bytes=900-,0-9", [r(900, 100), r(0, 10)]),
    ])
    func multiple(value: String, expected: [ByteRange]) {
        #expect(ByteRangeSet.decide([value], size: 1000) == .partial(expected))
    }

    @Test("unsatisfiable members are dropped when one is satisfiable", arguments: [
        ("bytes=0-8,5000-", [r(0, 9)]),              // what is left is a single range: not multipart
        ("bytes=-0,990-", [r(990, 10)]),
        ("bytes=5000-,0-8,-0,200-209", [r(0, 9), r(200, 10)]),
    ])
    func dropped(value: String, expected: [ByteRange]) {
        #expect(ByteRangeSet.decide([value], size: 1000) == .partial(expected))
    }

    @Test("abuse guards: overlapping, or adding up to more than the file → full", arguments: [
        ("bytes=0-10,5-15", Int64(1000)),
        ("bytes=0-0,0-0", 1000),
        ("bytes=-10,990-999", 1000),
        ("bytes=0-,0-", 1000),
        ("bytes=500-599,0-99,550-", 1000),
        ("bytes=0-5,3-9", 10),                        // 6 + 7 = 13 > 10
    ])
    func abuse(value: String, size: Int64) {
        #expect(ByteRangeSet.decide([value], size: size) == .full)
    }

    @Test("at most 16 ranges are honoured")
    func rangeCount() {
        let sixteen = (0..<16).map { "\($0 * 10)-\($0 * 10 + 4)" }.joined(separator: ",")
        #expect(ByteRangeSet.decide(["bytes=" + sixteen], size: 1000) == .partial((0..<16).map { r(Int64($0) * 10, 5) }))
        #expect(ByteRangeSet.decide(["bytes=" + sixteen + ",500-504"], size: 1000) == .full)
        // Unsatisfiable members count too.
        #expect(ByteRangeSet.decide(["bytes=" + sixteen + ",5000-"], size: 1000) == .full)
    }

    @Test("parsing stops at the 17th member: what follows is never read")
    func stopsAfterSeventeen() {
        let seventeen = (0..<17).map { "\($0 * 10)-\($0 * 10 + 4)" }.joined(separator: ",")
        #expect(ByteRangeSet.decide(["bytes=" + seventeen + ",garbage"], size: 1000) == .full)
        #expect(ByteRangeSet.decide(["bytes=" + String(repeating: "0-0,", count: 100_000)], size: 1000) == .full)
        // Before the 17th member an invalid one still makes the header invalid.
        #expect(ByteRangeSet.decide(["bytes=0-0,1-1,x" + String(repeating: ",2-2", count: 20)], size: 1000) == .unsatisfiable)
    }

    @Test("no Range, or Range sent more than once → full")
    func occurrences() {
        #expect(ByteRangeSet.decide([], size: 1000) == .full)
        #expect(ByteRangeSet.decide(["bytes=0-8", "bytes=0-8"], size: 1000) == .full)
        #expect(ByteRangeSet.decide(["bytes=0-8", "bytes=abc"], size: 1000) == .full)
    }

    @Test("an empty file with any Range → full 200", arguments: [
        "bytes=0-8", "bytes=-10", "bytes=0-", "bytes=-0", "bytes=abc", "bytes=0-0,1-1",
    ])
    func emptyFile(value: String) {
        #expect(ByteRangeSet.decide([value], size: 0) == .full)
    }

    @Test("a one-byte file")
    func oneByte() {
        #expect(ByteRangeSet.decide(["bytes=0-0"], size: 1) == .partial([r(0, 1)]))
        #expect(ByteRangeSet.decide(["bytes=-1"], size: 1) == .partial([r(0, 1)]))
        #expect(ByteRangeSet.decide(["bytes=1-"], size: 1) == .unsatisfiable)
    }

    @Test("Content-Range values")
    func contentRange() {
        #expect(r(0, 9).contentRange(completeLength: 1000) == "bytes 0-8/1000")
        #expect(r(990, 10).lastOffset == 999)
        #expect(ByteRangeSet.unsatisfiedContentRange(completeLength: 1000) == "bytes */1000")
    }
}
