#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds and parses request heads in a byte stream, without I/O.
///
/// The parser is resumable: bytes that were already searched for the end of the head are not searched again,
/// so a client that sends one byte at a time costs linear, not quadratic, work.
public struct RequestHeadParser: Sendable {
    public enum Result: Sendable {
        /// More bytes are needed.
        case incomplete
        /// A head was parsed from the first `consumed` bytes.
        case head(RequestHead, consumed: Int)
        /// The bytes cannot be a valid request.
        case failure(RequestParseError)
    }

    /// What `scan` found: a head checked and indexed in place, before any `String` is made.
    public enum ScanResult: Sendable {
        /// More bytes are needed.
        case incomplete
        /// A checked head occupies the first `index.consumed` bytes.
        case head(RequestHeadIndex)
        /// The bytes cannot be a valid request.
        case failure(RequestParseError)
    }

    public var limits: HTTPLimits
    /// Bytes of the current buffer already searched for the end of the head.
    private var scanned = 0
    /// Bytes of the current buffer already searched for the end of the request line.
    private var lineScanned = 0

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Forget the scan position (call after the consumed bytes were removed from the buffer).
    public mutating func reset() { scanned = 0; lineScanned = 0 }

    /// Looks for a complete head at the start of `buffer` and copies it out as a `RequestHead`.
    public mutating func parse(_ buffer: UnsafeRawBufferPointer) -> Result {
        switch scan(buffer) {
        case .incomplete: .incomplete
        case .failure(let error): .failure(error)
        case .head(let index): .head(RequestHead(RawRequestHead(buffer: buffer, index: index)), consumed: index.consumed)
        }
    }

    /// Looks for a complete head at the start of `buffer`, checks it and indexes it in place
    /// (`RawRequestHead(buffer:index:)` reads it).
    public mutating func scan(_ buffer: UnsafeRawBufferPointer) -> ScanResult {
        let count = buffer.count
        guard count > 0, let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .incomplete }
        // RFC 9112 §2.2: ignore empty lines before the request line.
        var start = 0
        while start < count, base[start] == 0x0D || base[start] == 0x0A { start += 1 }
        // Empty lines are not kept forever: a stream of them would otherwise be buffered without limit.
        if start > limits.maxRequestLineBytes { return .failure(.badRequest("Too many empty lines before the request line.")) }
        if start == count { return .incomplete }

        // The request line ends at the first LF (bytes already searched are not searched again).
        guard let lineEnd = Self.find(0x0A, in: base, from: max(start, lineScanned), to: count) else {
            if count - start > limits.maxRequestLineBytes + 1 { return .failure(.uriTooLong) }
            lineScanned = count
            scanned = count
            return .incomplete
        }
        lineScanned = lineEnd
        var requestLineEnd = lineEnd
        if requestLineEnd > start, base[requestLineEnd - 1] == 0x0D { requestLineEnd -= 1 }
        if requestLineEnd - start > limits.maxRequestLineBytes { return .failure(.uriTooLong) }

        // The head ends at an empty line: LF followed by LF or CRLF.
        let fieldsStart = lineEnd + 1
        var searchFrom = max(fieldsStart, scanned - 2)
        var headEnd = -1        // index just past the empty line
        var fieldsEnd = fieldsStart  // index of the empty line
        if fieldsStart < count, base[fieldsStart] == 0x0A {
            headEnd = fieldsStart + 1; fieldsEnd = fieldsStart
        } else if fieldsStart + 1 < count, base[fieldsStart] == 0x0D, base[fieldsStart + 1] == 0x0A {
            headEnd = fieldsStart + 2; fieldsEnd = fieldsStart
        } else {
            while let lf = Self.find(0x0A, in: base, from: searchFrom, to: count) {
                if lf + 1 < count, base[lf + 1] == 0x0A { headEnd = lf + 2; fieldsEnd = lf + 1; break }
                if lf + 2 < count, base[lf + 1] == 0x0D, base[lf + 2] == 0x0A { headEnd = lf + 3; fieldsEnd = lf + 1; break }
                if lf + 2 >= count { break }
                searchFrom = lf + 1
            }
        }
        if headEnd < 0 {
            // The section may be complete but for the empty line's LF: its CR does not count against the limit.
            if count - fieldsStart > limits.maxHeaderBytes + 1 { return .failure(.headersTooLarge) }
            scanned = count
            return .incomplete
        }
        if fieldsEnd - fieldsStart > limits.maxHeaderBytes { return .failure(.headersTooLarge) }
        scanned = 0
        lineScanned = 0
        switch RequestHeadScanner.scan(base: base, requestLine: start..<requestLineEnd, fields: fieldsStart..<fieldsEnd,
                                       consumed: headEnd, limits: limits) {
        case .success(let index): return .head(index)
        case .failure(let error): return .failure(error)
        }
    }

    private static func find(_ byte: UInt8, in base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to else { return nil }
        guard let p = memchr(base + from, Int32(byte), to - from) else { return nil }
        return base.distance(to: p.assumingMemoryBound(to: UInt8.self))
    }

}

/// Byte classes of RFC 9110 §5.6.2.
enum CharacterClass {
    static let tokenTable: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for c in UInt8(0x30)...0x39 { table[Int(c)] = true }
        for c in UInt8(0x41)...0x5A { table[Int(c)] = true }
        for c in UInt8(0x61)...0x7A { table[Int(c)] = true }
        for c in "!#$%&'*+-.^_`|~".utf8 { table[Int(c)] = true }
        return table
    }()

    @inline(__always) static func isToken(_ c: UInt8) -> Bool { tokenTable[Int(c)] }
    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
}
