import Testing
import HTTP

/// A request whose request line is exactly `lineBytes` long (without CRLF).
func requestLineText(ofLength lineBytes: Int) -> String {
    let fixed = "GET / HTTP/1.1".utf8.count
    return "GET /" + String(repeating: "a", count: lineBytes - fixed) + " HTTP/1.1"
}

/// A header section (from after the request line up to, not including, the empty line) of exactly `bytes` bytes,
/// with `Host` first and the rest in `fieldCount - 1` filler fields.
func headerSection(ofLength bytes: Int, fieldCount: Int = 2) -> String {
    var block = "Host: a\r\n"
    let fillers = fieldCount - 1
    let overhead = "X-0000: \r\n".utf8.count
    var remaining = bytes - block.utf8.count
    for i in 0..<fillers {
        let digits = String(i)
        let name = "X-" + String(repeating: "0", count: 4 - digits.count) + digits
        let valueLength = i == fillers - 1 ? remaining - overhead : min(8, remaining - overhead)
        block += name + ": " + String(repeating: "v", count: valueLength) + "\r\n"
        remaining -= overhead + valueLength
    }
    return block
}

/// Feeds `bytes` to one parser as a growing buffer, `step` new bytes at a time, as a connection does.
/// Returns the outcome and how many bytes had arrived when the parser stopped saying `incomplete`.
func parseHeadGrowing(_ bytes: [UInt8], step: Int = 1, limits: HTTPLimits = HTTPLimits()) -> (HeadParseOutcome, arrived: Int) {
    var parser = RequestHeadParser(limits: limits)
    var arrived = 0
    while arrived < bytes.count {
        arrived = min(bytes.count, arrived + step)
        let result = bytes.withUnsafeBytes { parser.parse(UnsafeRawBufferPointer(rebasing: $0[0..<arrived])) }
        if case .incomplete = result { continue }
        return (headOutcome(result), arrived)
    }
    return (.incomplete, arrived)
}

@Suite("Request head parser: limits (spec §7) and incremental scanning")
struct RequestHeadParserLimitTests {
    @Test("request line up to 8 KiB is accepted, one byte more is 414", arguments: [
        (8 * 1024 - 1, nil), (8 * 1024, nil), (8 * 1024 + 1, 414), (64 * 1024, 414),
    ] as [(Int, Int?)])
    func requestLineLimit(length: Int, status: Int?) {
        let text = requestLineText(ofLength: length) + "\r\nHost: a\r\n\r\n"
        #expect(requestLineText(ofLength: length).utf8.count == length)
        let result = headOutcome(parseHeadOnce(text))
        #expect(result.status == status, "\(result)")
        // The same answer before the rest of the head arrives (the line alone, without its LF).
        if status != nil {
            #expect(headOutcome(parseHeadOnce(requestLineText(ofLength: length) + "\r")).status == status)
        }
    }

    @Test("header section up to 32 KiB is accepted, one byte more is 431", arguments: [
        (32 * 1024, nil), (32 * 1024 + 1, 431), (40 * 1024, 431),
    ] as [(Int, Int?)])
    func headerBytesLimit(length: Int, status: Int?) {
        let block = headerSection(ofLength: length)
        #expect(block.utf8.count == length)
        let bytes = Array(("GET / HTTP/1.1\r\n" + block + "\r\n").utf8)
        #expect(headOutcome(parseHeadOnce(bytes)).status == status)
        // Arriving byte by byte gives the same answer (the empty line's CR alone must not tip it over).
        #expect(parseHeadGrowing(bytes).0.status == status)
    }

    @Test("up to 100 fields are accepted, the 101st is 431", arguments: [(100, nil), (101, 431), (1000, 431)] as [(Int, Int?)])
    func fieldCountLimit(count: Int, status: Int?) {
        let block = headerSection(ofLength: count * 20, fieldCount: count)
        let text = "GET / HTTP/1.1\r\n" + block + "\r\n"
        let result = parseHeadOnce(text)
        #expect(headOutcome(result).status == status)
        if case .head(let head, _) = result { #expect(head.fields.count == count) }
    }

    @Test("limits are configurable")
    func configurableLimits() {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 20
        limits.maxHeaderBytes = 30
        limits.maxHeaderCount = 2
        #expect(headOutcome(parseHeadOnce(requestLineText(ofLength: 20) + "\r\nHost: a\r\n\r\n", limits: limits)).status == nil)
        #expect(headOutcome(parseHeadOnce(requestLineText(ofLength: 21) + "\r\nHost: a\r\n\r\n", limits: limits)).status == 414)
        #expect(headOutcome(parseHeadOnce("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nY: 2\r\n\r\n", limits: limits)).status == 431)
        #expect(headOutcome(parseHeadOnce("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 30) + "\r\n\r\n",
                                  limits: limits)).status == 431)
    }

    static let feedingCases: [String] = [
        "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n",
        "\r\n\r\nGET /a HTTP/1.1\r\nHost: a\r\nX: 1\r\n\r\n",
        "GET /a HTTP/1.1\nHost: a\nX: 1\n\n",
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
        "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",
        requestLineText(ofLength: 8 * 1024) + "\r\nHost: a\r\n\r\n",
        requestLineText(ofLength: 8 * 1024 + 1) + "\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\n" + headerSection(ofLength: 32 * 1024, fieldCount: 50) + "\r\n",
        "GET / HTTP/1.1\r\n" + headerSection(ofLength: 32 * 1024 + 1, fieldCount: 50) + "\r\n",
        "GET / HTTP/1.1\r\n" + headerSection(ofLength: 2000, fieldCount: 101) + "\r\n",
    ]

    @Test("feeding one byte at a time, or in odd pieces, gives the same result as one buffer",
          arguments: feedingCases.indices)
    func incrementalFeeding(index: Int) {
        let bytes = Array(Self.feedingCases[index].utf8)
        let whole = headOutcome(parseHeadOnce(bytes))
        for step in [1, 2, 3, 7, 64, 1000] {
            let (fed, _) = parseHeadGrowing(bytes, step: step)
            #expect(fed == whole, "step \(step): \(fed) vs \(whole)")
        }
    }

    // The parser must refuse an over-long line as soon as it is over the limit, not after reading all of it:
    // the loop below is bounded by the limit, not by the size of what the client is willing to send.
    @Test("a 256 KiB request line is refused as soon as it passes 8 KiB, even one byte at a time")
    func hugeRequestLine() {
        let bytes = Array(("GET /" + String(repeating: "a", count: 256 * 1024) + " HTTP/1.1\r\nHost: a\r\n\r\n").utf8)
        let (result, arrived) = parseHeadGrowing(bytes, step: 1)
        #expect(result == .failure(414))
        #expect(arrived <= 8 * 1024 + 2)
        let (chunked, arrivedInPieces) = parseHeadGrowing(bytes, step: 4096)
        #expect(chunked == .failure(414))
        #expect(arrivedInPieces <= 3 * 4096)
    }

    @Test("a 1 MiB header section is refused as soon as it passes 32 KiB, even one byte at a time")
    func hugeHeaderSection() {
        let bytes = Array(("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 1024 * 1024) + "\r\n\r\n").utf8)
        let (result, arrived) = parseHeadGrowing(bytes, step: 1)
        #expect(result == .failure(431))
        #expect(arrived <= 16 + 32 * 1024 + 2)
    }

    @Test("a parser is reusable after a head: reset forgets the scan position")
    func reuse() {
        var parser = RequestHeadParser()
        let first = Array("GET /one HTTP/1.1\r\nHost: a\r\nX: ".utf8)
        #expect(headOutcome(first.withUnsafeBytes { parser.parse($0) }) == .incomplete)
        let complete = first + Array("1\r\n\r\n".utf8)
        #expect(headOutcome(complete.withUnsafeBytes { parser.parse($0) })
                == .head(method: "GET", target: "/one", consumed: complete.count))
        let second = Array("GET /two HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        #expect(headOutcome(second.withUnsafeBytes { parser.parse($0) })
                == .head(method: "GET", target: "/two", consumed: second.count))
        // After an incomplete scan of other bytes, reset() makes a new buffer safe to parse.
        let partial = Array("GET /three HTTP/1.1\r\nHost: a\r\nX-Long-Name: value".utf8)
        #expect(headOutcome(partial.withUnsafeBytes { parser.parse($0) }) == .incomplete)
        parser.reset()
        let short = Array("GET /4 HTTP/1.1\nHost: a\n\n".utf8)
        #expect(headOutcome(short.withUnsafeBytes { parser.parse($0) }) == .head(method: "GET", target: "/4", consumed: short.count))
    }
}
