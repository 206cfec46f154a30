import Testing
import HTTP

/// What decoding a whole input produced.
struct ChunkedOutcome: Equatable, CustomStringConvertible {
    var body: [UInt8] = []
    var consumed = 0
    var done = false
    var failure: ChunkedDecoder.Failure?

    var description: String {
        "body \(String(decoding: body, as: UTF8.self).debugDescription), consumed \(consumed), done \(done), failure \(String(describing: failure))"
    }
}

/// Feeds `input` to a fresh decoder in pieces ending at `splits`, as a connection would hand over successive reads.
func decodeChunked(_ input: [UInt8], splits: [Int] = [], maxBodyBytes: Int64 = 1 << 20, maxSideBytes: Int = 8 * 1024) -> ChunkedOutcome {
    var decoder = ChunkedDecoder(maxBodyBytes: maxBodyBytes, maxSideBytes: maxSideBytes)
    var result = ChunkedOutcome()
    var start = 0
    for end in splits + [input.count] where end >= start {
        let piece = Array(input[start..<end])
        do {
            let used = try piece.withUnsafeBytes { (buffer) throws(ChunkedDecoder.Failure) -> Int in
                try decoder.decode(buffer) { result.body.append(contentsOf: $0) }
            }
            result.consumed += used
            if decoder.isDone { result.done = true; break }
            #expect(used == piece.count, "an unfinished decoder consumes all it is given")
        } catch let error as ChunkedDecoder.Failure {
            result.failure = error
            break
        } catch {
            Issue.record("unexpected \(error)")
            break
        }
        start = end
    }
    #expect(decoder.decodedBytes == Int64(result.body.count) || result.failure != nil)
    return result
}

struct ChunkedCase: CustomTestStringConvertible, Sendable {
    let name: String
    let input: [UInt8]
    let body: String
    /// Bytes after the body that belong to the next request.
    let rest: Int

    init(_ name: String, _ input: String, _ body: String, rest: Int = 0) {
        self.name = name
        self.input = Array(input.utf8)
        self.body = body
        self.rest = rest
    }

    var testDescription: String { name }

    static let valid: [ChunkedCase] = [
        ChunkedCase("one chunk", "5\r\nhello\r\n0\r\n\r\n", "hello"),
        ChunkedCase("two chunks", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world"),
        ChunkedCase("empty body", "0\r\n\r\n", ""),
        ChunkedCase("upper-case hex", "A\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ChunkedCase("lower-case hex", "a\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ChunkedCase("leading zeros", "0005\r\nhello\r\n000\r\n\r\n", "hello"),
        ChunkedCase("multi-digit size", "1a\r\n" + String(repeating: "z", count: 26) + "\r\n0\r\n\r\n", String(repeating: "z", count: 26)),
        // RFC 9112 §7.1.1: chunk extensions are ignored.
        ChunkedCase("extension", "5;name=value\r\nhello\r\n0\r\n\r\n", "hello"),
        ChunkedCase("extension without value", "5;flag\r\nhello\r\n0;last\r\n\r\n", "hello"),
        ChunkedCase("quoted extension", "5;a=\"x;y\"\r\nhello\r\n0\r\n\r\n", "hello"),
        ChunkedCase("whitespace before extension", "5 ;a=b\r\nhello\r\n0\r\n\r\n", "hello"),
        // RFC 9112 §7.1.2: trailer fields are read and discarded.
        ChunkedCase("one trailer", "5\r\nhello\r\n0\r\nX-Checksum: 1\r\n\r\n", "hello"),
        ChunkedCase("two trailers", "5\r\nhello\r\n0\r\nA: 1\r\nB: 2\r\n\r\n", "hello"),
        // RFC 9112 §2.2: a bare LF may be accepted as a line terminator.
        ChunkedCase("bare LF everywhere", "5\nhello\n0\n\n", "hello"),
        ChunkedCase("bare LF trailer", "5\r\nhello\r\n0\r\nA: 1\n\n", "hello"),
        ChunkedCase("CRLF in the data is data", "4\r\n\r\n\r\n\r\n0\r\n\r\n", "\r\n\r\n"),
        ChunkedCase("next request follows", "5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n", "hello", rest: 16),
    ]

    static let malformed: [ChunkedCase] = [
        ChunkedCase("no size", "\r\nhello\r\n0\r\n\r\n", ""),
        ChunkedCase("bad hex digit", "g\r\nhello\r\n0\r\n\r\n", ""),
        ChunkedCase("hex prefix", "0x5\r\nhello\r\n0\r\n\r\n", ""),
        ChunkedCase("negative size", "-5\r\nhello\r\n0\r\n\r\n", ""),
        ChunkedCase("size then garbage", "5x\r\nhello\r\n0\r\n\r\n", ""),
        ChunkedCase("CR without LF after size", "5\rhello\r\n0\r\n\r\n", ""),
        ChunkedCase("data longer than size", "5\r\nhello!\r\n0\r\n\r\n", ""),
        ChunkedCase("no CRLF after data", "5\r\nhelloX\r\n0\r\n\r\n", ""),
        ChunkedCase("CR without LF after data", "5\r\nhello\rX0\r\n\r\n", ""),
        ChunkedCase("control byte in extension", "5;a=\u{1}\r\nhello\r\n0\r\n\r\n", ""),
        ChunkedCase("CR without LF in trailer", "5\r\nhello\r\n0\r\nA: 1\rB\r\n\r\n", ""),
        ChunkedCase("CR without LF at the end", "5\r\nhello\r\n0\r\n\rX", ""),
        // 16 hex digits would overflow a 64-bit size.
        ChunkedCase("16 size digits", "1000000000000000\r\n", ""),
        ChunkedCase("20 size digits", "ffffffffffffffffffff\r\n", ""),
    ]
}

@Suite("Chunked request bodies (RFC 9112 §7.1)")
struct ChunkedDecoderTests {
    @Test("valid bodies decode; consumption stops right after the last CRLF", arguments: ChunkedCase.valid)
    func valid(row: ChunkedCase) {
        let result = decodeChunked(row.input)
        #expect(result.failure == nil)
        #expect(result.done)
        #expect(String(decoding: result.body, as: UTF8.self) == row.body)
        #expect(result.consumed == row.input.count - row.rest)
    }

    @Test("split at every byte boundary, and fed byte by byte, gives the same output", arguments: ChunkedCase.valid)
    func everySplit(row: ChunkedCase) {
        let whole = decodeChunked(row.input)
        for split in 0...row.input.count {
            #expect(decodeChunked(row.input, splits: [split]) == whole, "split at \(split)")
        }
        #expect(decodeChunked(row.input, splits: Array(0...row.input.count)) == whole, "byte by byte")
    }

    @Test("malformed bodies fail as malformed", arguments: ChunkedCase.malformed)
    func malformed(row: ChunkedCase) {
        #expect(decodeChunked(row.input).failure == .malformed)
        #expect(decodeChunked(row.input, splits: Array(0...row.input.count)).failure == .malformed, "byte by byte")
    }

    @Test("a truncated body is neither done nor failed", arguments: [
        "5", "5\r", "5\r\n", "5\r\nhel", "5\r\nhello", "5\r\nhello\r", "5\r\nhello\r\n0", "5\r\nhello\r\n0\r\n",
        "5\r\nhello\r\n0\r\nA: 1\r\n", "5;ext", "5\r\nhello\r\n0\r\n\r",
    ])
    func truncated(text: String) {
        let result = decodeChunked(Array(text.utf8))
        #expect(result.failure == nil)
        #expect(!result.done)
        #expect(result.consumed == text.utf8.count)
        #expect(String(decoding: result.body, as: UTF8.self) == String("hello".prefix(result.body.count)))
    }

    @Test("the body limit counts decoded bytes", arguments: [
        (10, nil), (11, nil), (9, ChunkedDecoder.Failure.tooLarge), (0, .tooLarge),
    ] as [(Int64, ChunkedDecoder.Failure?)])
    func bodyLimit(limit: Int64, failure: ChunkedDecoder.Failure?) {
        let input = Array("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n".utf8)
        #expect(decodeChunked(input, maxBodyBytes: limit).failure == failure)
    }

    @Test("an over-limit chunk is refused at its size line, before its data arrives")
    func limitBeforeData() {
        let result = decodeChunked(Array("fffffffffffffff\r\n".utf8), maxBodyBytes: 1 << 20)
        #expect(result.failure == .tooLarge)
        #expect(result.body.isEmpty)
    }

    @Test("extensions and trailers are bounded", arguments: [
        "5;" + String(repeating: "x", count: 200) + "\r\nhello\r\n0\r\n\r\n",
        "5\r\nhello\r\n0\r\nX: " + String(repeating: "y", count: 200) + "\r\n\r\n",
        "1;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\nx\r\n"
            + String(repeating: "1;bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\nx\r\n", count: 3) + "0\r\n\r\n",
    ])
    func sideBytesBounded(text: String) {
        #expect(decodeChunked(Array(text.utf8), maxSideBytes: 100).failure == .tooLarge)
        #expect(decodeChunked(Array(text.utf8), maxSideBytes: 1000).failure == nil)
    }

    @Test("a done decoder consumes nothing more")
    func doneConsumesNothing() throws {
        var decoder = ChunkedDecoder(maxBodyBytes: 100)
        let input = Array("0\r\n\r\n".utf8)
        _ = try input.withUnsafeBytes { try decoder.decode($0) { _ in } }
        #expect(decoder.isDone)
        let more = Array("5\r\nhello".utf8)
        let used = try more.withUnsafeBytes { try decoder.decode($0) { _ in Issue.record("emitted after done") } }
        #expect(used == 0)
    }
}
