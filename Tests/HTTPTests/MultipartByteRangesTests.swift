import Testing
import HTTP

@Suite("multipart/byteranges (RFC 9110 §14.6)")
struct MultipartByteRangesTests {
    static let representation: [UInt8] = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    @Test("exact framing of a two-part body")
    func framing() {
        let data = Array("0123456789".utf8)
        let body = MultipartByteRanges(
            ranges: [ByteRange(offset: 0, length: 2), ByteRange(offset: 8, length: 2)],
            totalSize: 10, contentType: "text/plain", boundary: "B0")
        let expected = "\r\n--B0\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/10\r\n\r\n01"
            + "\r\n--B0\r\nContent-Type: text/plain\r\nContent-Range: bytes 8-9/10\r\n\r\n89"
            + "\r\n--B0--\r\n"
        #expect(String(decoding: body.body(of: data), as: UTF8.self) == expected)
        #expect(body.contentLength == Int64(expected.utf8.count))
        #expect(body.contentTypeValue == "multipart/byteranges; boundary=B0")
        #expect(body.trailer == Array("\r\n--B0--\r\n".utf8))
        #expect(body.parts.map(\.range) == [ByteRange(offset: 0, length: 2), ByteRange(offset: 8, length: 2)])
    }

    @Test("without a content type the parts carry only Content-Range")
    func noContentType() throws {
        let body = MultipartByteRanges(ranges: [ByteRange(offset: 1, length: 1)], totalSize: 3, contentType: "", boundary: "x")
        #expect(body.parts[0].head == Array("\r\n--x\r\nContent-Range: bytes 1-1/3\r\n\r\n".utf8))
        let parsed = try MultipartByteRanges.parse(body: body.body(of: [7, 8, 9]), boundary: "x")
        #expect(parsed.count == 1)
        #expect(parsed[0].contentType == nil)
        #expect(parsed[0].bytes == [8])
    }

    @Test("encode → parse round-trips byte for byte, with an exact Content-Length", arguments: [
        "bytes=0-0,-1",
        "bytes=500-599,0-99",
        "bytes=0-4,5-9,10-14,995-",
        "bytes=0-499,500-999",
        "bytes=" + (0..<16).map { "\($0 * 60)-\($0 * 60 + 29)" }.joined(separator: ","),
    ])
    func roundTrip(rangeHeader: String) throws {
        guard case .partial(let ranges) = ByteRangeSet.decide([rangeHeader], size: 1000) else {
            Issue.record("expected a partial decision for \(rangeHeader)")
            return
        }
        #expect(ranges.count >= 2)
        let boundary = MultipartByteRanges.makeBoundary()
        let multipart = MultipartByteRanges(ranges: ranges, totalSize: 1000, contentType: "application/octet-stream", boundary: boundary)
        let body = multipart.body(of: Self.representation)
        #expect(Int64(body.count) == multipart.contentLength)

        let parsed = try MultipartByteRanges.parse(body: body, boundary: boundary)
        #expect(parsed.count == ranges.count)
        for (part, range) in zip(parsed, ranges) {
            #expect(part.contentRange == range.contentRange(completeLength: 1000))
            #expect(part.contentType == "application/octet-stream")
            #expect(part.bytes == Array(Self.representation[Int(range.offset)..<Int(range.offset + range.length)]))
        }
    }

    @Test("the parser accepts a first boundary without CRLF, a preamble, padding and an epilogue")
    func lenientParser() throws {
        let body = "--B\r\ncontent-range: bytes 0-1/4\r\n\r\nab\r\n--B \t\r\nContent-Range:bytes 2-3/4\r\nContent-Type:  text/plain \r\n\r\ncd\r\n--B--"
        let parsed = try MultipartByteRanges.parse(body: Array(body.utf8), boundary: "B")
        #expect(parsed.map(\.contentRange) == ["bytes 0-1/4", "bytes 2-3/4"])
        #expect(parsed.map(\.contentType) == [nil, "text/plain"])
        #expect(parsed.map(\.bytes) == [Array("ab".utf8), Array("cd".utf8)])

        let withPreamble = "preamble\r\n--B\r\nContent-Range: bytes 0-1/4\r\n\r\nab\r\n--B--\r\nepilogue"
        #expect(try MultipartByteRanges.parse(body: Array(withPreamble.utf8), boundary: "B").map(\.bytes) == [Array("ab".utf8)])
    }

    @Test("part bytes may contain CRLF and dashes", arguments: [Array("\r\n--\r\n--B".utf8), [0x0D, 0x0A, 0x2D, 0x2D]])
    func bytesLikeFraming(data: [UInt8]) throws {
        let multipart = MultipartByteRanges(ranges: [ByteRange(offset: 0, length: Int64(data.count)), ByteRange(offset: 0, length: 1)],
                                            totalSize: Int64(data.count), contentType: "a/b", boundary: "BB")
        let parsed = try MultipartByteRanges.parse(body: multipart.body(of: data), boundary: "BB")
        #expect(parsed.map(\.bytes) == [data, [data[0]]])
    }

    @Test("malformed bodies throw", arguments: [
        ("no boundary at all", MultipartByteRanges.ParseError.missingBoundary),
        ("--B\r\nContent-Range: bytes 0-1/4\r\n\r\nab", .missingCloseDelimiter),
        ("--B\r\nContent-Type: a/b\r\n\r\nab\r\n--B--", .missingContentRange),
        ("--B\r\nno colon here\r\n\r\nab\r\n--B--", .malformedPart),
        ("--Bx\r\nContent-Range: bytes 0-1/4\r\n\r\nab\r\n--B--", .malformedPart),
        ("--B\r\nContent-Range: bytes 0-1/4\r\n", .malformedPart),
        ("--B", .missingCloseDelimiter),
    ])
    func malformed(body: String, error: MultipartByteRanges.ParseError) {
        #expect(throws: error) { try MultipartByteRanges.parse(body: Array(body.utf8), boundary: "B") }
    }

    @Test("boundaries are random alphanumerics, at least 16 long")
    func boundaries() {
        let samples = (0..<50).map { _ in MultipartByteRanges.makeBoundary() }
        #expect(Set(samples).count == samples.count)
        for boundary in samples {
            #expect(boundary.utf8.count >= 16 && boundary.utf8.count <= 70)
            #expect(boundary.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) })
        }
    }
}
