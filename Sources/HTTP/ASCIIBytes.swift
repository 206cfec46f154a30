/// Byte-level building blocks shared by the sans-I/O parsers of this target.
///
/// Every parser here walks UTF-8 bytes instead of using `Character`s, regular expressions or
/// Foundation formatters: these functions run once or more per request.
enum ASCIIBytes {
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let comma: UInt8 = 0x2C
    static let hyphen: UInt8 = 0x2D
    static let colon: UInt8 = 0x3A
    static let quote: UInt8 = 0x22
    static let percent: UInt8 = 0x25
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A

    /// RFC 9110 §5.6.3: OWS = *( SP / HTAB ).
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

    @inline(__always)
    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20) &- 0x61 < 26
    }

    /// The value of a hexadecimal digit (either case), or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        if isDigit(byte) { return byte &- 0x30 }
        let lower = byte | 0x20
        if lower &- 0x61 < 6 { return lower &- 0x61 &+ 10 }
        return nil
    }

    /// RFC 9110 §5.6.2: tchar.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        if isAlphanumeric(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// The index range of `bytes` without leading and trailing SP / HTAB.
    static func trimmingWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    /// True when `bytes[range]` equals the ASCII `literal`, ignoring ASCII letter case.
    static func equalsCaseInsensitive(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for offset in 0..<range.count {
            let a = bytes[range.lowerBound + offset]
            let b = expected[offset]
            if a == b { continue }
            let folded = a | 0x20
            guard folded == b | 0x20, folded &- 0x61 < 26 else { return false }
        }
        return true
    }

    /// Runs `body` over the UTF-8 bytes of `string` without copying when the storage is contiguous.
    @inline(__always)
    static func withBytes<S: StringProtocol, R>(of string: S, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }
}
