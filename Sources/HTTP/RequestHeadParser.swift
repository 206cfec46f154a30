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

    /// Looks for a complete head at the start of `buffer`.
    public mutating func parse(_ buffer: UnsafeRawBufferPointer) -> Result {
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
        switch Self.parseHead(base: base, requestLine: start..<requestLineEnd, fields: fieldsStart..<fieldsEnd, limits: limits) {
        case .success(let head): return .head(head, consumed: headEnd)
        case .failure(let error): return .failure(error)
        }
    }

    private static func find(_ byte: UInt8, in base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to else { return nil }
        guard let p = memchr(base + from, Int32(byte), to - from) else { return nil }
        return base.distance(to: p.assumingMemoryBound(to: UInt8.self))
    }

    // MARK: - Parsing a complete head

    static func parseHead(base: UnsafePointer<UInt8>, requestLine: Range<Int>, fields: Range<Int>,
                          limits: HTTPLimits) -> Swift.Result<RequestHead, RequestParseError> {
        // request-line = method SP request-target SP HTTP-version (RFC 9112 §3)
        var i = requestLine.lowerBound
        let end = requestLine.upperBound
        let methodStart = i
        while i < end, CharacterClass.isToken(base[i]) { i += 1 }
        guard i > methodStart, i < end, base[i] == 0x20 else { return .failure(.badRequest("Malformed request line.")) }
        let method = HTTPMethod(bytes: UnsafeRawBufferPointer(start: base + methodStart, count: i - methodStart))
        i += 1
        let targetStart = i
        // A fragment ("#") is never part of a request-target (RFC 9112 §3.2): such a line is malformed.
        while i < end, base[i] > 0x20, base[i] != 0x7F, base[i] != 0x23 { i += 1 }
        guard i > targetStart, i < end, base[i] == 0x20 else { return .failure(.badRequest("Malformed request line.")) }
        let targetEnd = i
        i += 1
        // HTTP-version = "HTTP/" DIGIT "." DIGIT
        guard end - i == 8,
              base[i] == 0x48, base[i + 1] == 0x54, base[i + 2] == 0x54, base[i + 3] == 0x50, base[i + 4] == 0x2F,
              CharacterClass.isDigit(base[i + 5]), base[i + 6] == 0x2E, CharacterClass.isDigit(base[i + 7]) else {
            return .failure(.badRequest("Malformed HTTP version."))
        }
        let major = Int(base[i + 5] - 0x30)
        let minor = Int(base[i + 7] - 0x30)
        guard major == 1 else { return .failure(.versionNotSupported) }
        var target = String(decoding: UnsafeRawBufferPointer(start: base + targetStart, count: targetEnd - targetStart), as: UTF8.self)
        if target.first != "/" {
            if let originForm = Self.originForm(ofAbsolute: target) {
                target = originForm
            } else if !(target == "*" && method == .options) {
                return .failure(.badRequest("Malformed request target."))
            }
        }

        // field-line = field-name ":" OWS field-value OWS (RFC 9112 §5)
        var headerFields = HTTPFields()
        headerFields.storage.reserveCapacity(8)
        var line = fields.lowerBound
        while line < fields.upperBound {
            var lineEnd = line
            while lineEnd < fields.upperBound, base[lineEnd] != 0x0A { lineEnd += 1 }
            var contentEnd = lineEnd
            if contentEnd > line, base[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            if headerFields.count == limits.maxHeaderCount { return .failure(.headersTooLarge) }
            // RFC 9112 §5.2: obsolete line folding is rejected.
            if base[line] == 0x20 || base[line] == 0x09 { return .failure(.badRequest("Obsolete line folding is not accepted.")) }
            var j = line
            while j < contentEnd, CharacterClass.isToken(base[j]) { j += 1 }
            // RFC 9112 §5.1: no whitespace between the field name and the colon.
            guard j > line, j < contentEnd, base[j] == 0x3A else { return .failure(.badRequest("Malformed header field.")) }
            let name = Self.lowercasedString(base + line, count: j - line)
            j += 1
            while j < contentEnd, base[j] == 0x20 || base[j] == 0x09 { j += 1 }
            var valueEnd = contentEnd
            while valueEnd > j, base[valueEnd - 1] == 0x20 || base[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            var k = j
            while k < valueEnd {
                let c = base[k]
                // RFC 9110 §5.5: CR, LF, NUL and other controls are not allowed in a field value.
                if (c < 0x20 && c != 0x09) || c == 0x7F { return .failure(.badRequest("Control character in a header field.")) }
                k += 1
            }
            let value = String(decoding: UnsafeRawBufferPointer(start: base + j, count: valueEnd - j), as: UTF8.self)
            headerFields.appendLowercased(name, value)
            line = lineEnd + 1
        }
        return Self.deriveFraming(method: method, target: target, minor: minor, fields: headerFields)
    }

    static func deriveFraming(method: HTTPMethod, target: String, minor: Int,
                              fields: HTTPFields) -> Swift.Result<RequestHead, RequestParseError> {
        var contentLength: Int64? = nil
        var contentLengthCount = 0
        var transferEncodings: [Substring] = []
        var transferEncodingFields = 0
        var hostCount = 0
        var connectionTokens: [Substring] = []
        var expectValues: [String] = []
        for field in fields.storage {
            switch field.name {
            case "content-length":
                contentLengthCount += 1
                // RFC 9112 §6.3 and spec §7: any repeated Content-Length (or a list) is refused as smuggling.
                guard contentLengthCount == 1, let n = Self.parseContentLength(field.value) else {
                    return .failure(.badRequest("Invalid or repeated Content-Length."))
                }
                contentLength = n
            case "transfer-encoding":
                transferEncodingFields += 1
                for element in field.value.split(separator: ",") {
                    let t = element.trimmingOWS()
                    if !t.isEmpty { transferEncodings.append(t) }
                }
            case "host":
                hostCount += 1
                // RFC 9112 §3.2: a Host field with an invalid value is a 400.
                guard HostField.isValid(field.value) else { return .failure(.badRequest("Invalid Host header.")) }
            case "connection":
                for element in field.value.split(separator: ",") { connectionTokens.append(element.trimmingOWS()) }
            case "expect":
                expectValues.append(field.value)
            default:
                break
            }
        }
        // RFC 9112 §3.2: a 1.1 request has exactly one Host.
        if minor >= 1, hostCount != 1 { return .failure(.badRequest(hostCount == 0 ? "Missing Host header." : "Repeated Host header.")) }
        if hostCount > 1 { return .failure(.badRequest("Repeated Host header.")) }

        var framing = BodyFraming.none
        if transferEncodingFields > 0 {
            // RFC 9112 §6.1: Transfer-Encoding with Content-Length is refused (request smuggling).
            if contentLength != nil { return .failure(.badRequest("Content-Length together with Transfer-Encoding.")) }
            if minor == 0 { return .failure(.badRequest("Transfer-Encoding in an HTTP/1.0 request.")) }
            guard let last = transferEncodings.last, last.lowercased() == "chunked" else {
                return .failure(.badRequest("The final transfer coding must be chunked."))
            }
            guard transferEncodings.count == 1 else {
                return .failure(.notImplemented("Only the chunked transfer coding is supported."))
            }
            framing = .chunked
        } else if let n = contentLength {
            framing = .contentLength(n)
        }

        var keepAlive = minor >= 1
        for token in connectionTokens {
            if token.lowercased() == "close" { keepAlive = false }
            else if token.lowercased() == "keep-alive", minor == 0 { keepAlive = false } // 1.0 is answered and closed (spec §4)
        }
        if minor == 0 { keepAlive = false }

        var expectsContinue = false
        // RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request MUST be ignored
        // (and §15.2: no 1xx response is sent to an HTTP/1.0 client).
        for value in expectValues where minor >= 1 {
            if value.lowercased() == "100-continue" { expectsContinue = true }
        }
        return .success(RequestHead(method: method, target: target, minorVersion: minor, fields: fields,
                                    framing: framing, keepAlive: keepAlive, expectsContinue: expectsContinue))
    }

    /// `Content-Length = 1*DIGIT`, at most 18 digits (no overflow).
    static func parseContentLength(_ value: String) -> Int64? {
        var n: Int64 = 0
        var digits = 0
        for c in value.utf8 {
            guard CharacterClass.isDigit(c) else { return nil }
            digits += 1
            if digits > 18 { return nil }
            n = n * 10 + Int64(c - 0x30)
        }
        return digits == 0 ? nil : n
    }

    /// `http://host[:port]/path?q` → `/path?q` (RFC 9112 §3.2.2: servers accept absolute-form).
    static func originForm(ofAbsolute target: String) -> String? {
        let lower = target.lowercased()
        let prefixLength: Int
        if lower.hasPrefix("http://") { prefixLength = 7 } else if lower.hasPrefix("https://") { prefixLength = 8 } else { return nil }
        let rest = target.dropFirst(prefixLength)
        guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let tail = rest[slash...]
        return tail.first == "?" ? "/" + tail : String(tail)
    }

    private static func lowercasedString(_ p: UnsafePointer<UInt8>, count: Int) -> String {
        String(unsafeUninitializedCapacity: count) { out in
            for k in 0..<count {
                let c = p[k]
                out[k] = (c >= 0x41 && c <= 0x5A) ? c + 0x20 : c
            }
            return count
        }
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
