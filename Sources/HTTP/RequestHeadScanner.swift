/// Checks a complete request head on its bytes (RFC 9112 §3, §5, §6) and indexes it, without making Strings.
enum RequestHeadScanner {
    static func scan(base: UnsafePointer<UInt8>, requestLine: Range<Int>, fields: Range<Int>, consumed: Int,
                     limits: HTTPLimits) -> Result<RequestHeadIndex, RequestParseError> {
        var index = RequestHeadIndex()
        index.consumed = consumed
        index.fieldsStart = fields.lowerBound
        index.fieldsEnd = fields.upperBound
        if let error = scanRequestLine(base: base, requestLine, into: &index) { return .failure(error) }
        if let error = scanFields(base: base, fields, limits: limits, into: &index) { return .failure(error) }
        if let error = deriveFraming(base: base, into: &index) { return .failure(error) }
        return .success(index)
    }

    // request-line = method SP request-target SP HTTP-version (RFC 9112 §3)
    private static func scanRequestLine(base: UnsafePointer<UInt8>, _ line: Range<Int>,
                                        into index: inout RequestHeadIndex) -> RequestParseError? {
        var i = line.lowerBound
        let end = line.upperBound
        let methodStart = i
        while i < end, CharacterClass.isToken(base[i]) { i += 1 }
        guard i > methodStart, i < end, base[i] == 0x20 else { return .badRequest("Malformed request line.") }
        index.method = HTTPMethod(bytes: UnsafeRawBufferPointer(start: base + methodStart, count: i - methodStart))
        i += 1
        let targetStart = i
        // A fragment ("#") is never part of a request-target (RFC 9112 §3.2), and a target is visible ASCII
        // (RFC 3986 §2: anything else is percent-encoded): a line with either is malformed.
        while i < end, base[i] > 0x20, base[i] < 0x7F, base[i] != 0x23 { i += 1 }
        guard i > targetStart, i < end, base[i] == 0x20 else { return .badRequest("Malformed request line.") }
        let targetEnd = i
        i += 1
        // HTTP-version = "HTTP/" DIGIT "." DIGIT
        guard end - i == 8,
              base[i] == 0x48, base[i + 1] == 0x54, base[i + 2] == 0x54, base[i + 3] == 0x50, base[i + 4] == 0x2F,
              CharacterClass.isDigit(base[i + 5]), base[i + 6] == 0x2E, CharacterClass.isDigit(base[i + 7]) else {
            return .badRequest("Malformed HTTP version.")
        }
        guard base[i + 5] == 0x31 else { return .versionNotSupported }
        index.minorVersion = Int(base[i + 7] - 0x30)
        index.targetStart = targetStart
        index.targetEnd = targetEnd
        if base[targetStart] == 0x2F { return nil }
        // RFC 9112 §3.2.2: servers accept absolute-form; what follows the authority is the origin-form.
        let target = UnsafeBufferPointer(start: base + targetStart, count: targetEnd - targetStart)
        var prefix = 0
        if target.count >= 7, ASCIIBytes.equalsCaseInsensitive(target, 0..<7, "http://") { prefix = 7 }
        if target.count >= 8, ASCIIBytes.equalsCaseInsensitive(target, 0..<8, "https://") { prefix = 8 }
        if prefix > 0 {
            var j = prefix
            while j < target.count, target[j] != 0x2F, target[j] != 0x3F { j += 1 }
            index.targetStart = targetStart + j
            // No path: "/" stands for it (before the query, if any).
            index.targetNeedsSlash = j == target.count || target[j] == 0x3F
            return nil
        }
        if target.count == 1, target[0] == 0x2A, index.method == .options { return nil }
        return .badRequest("Malformed request target.")
    }

    // field-line = field-name ":" OWS field-value OWS (RFC 9112 §5)
    private static func scanFields(base: UnsafePointer<UInt8>, _ fields: Range<Int>, limits: HTTPLimits,
                                   into index: inout RequestHeadIndex) -> RequestParseError? {
        var line = fields.lowerBound
        var count = 0
        while line < fields.upperBound {
            var lineEnd = line
            while lineEnd < fields.upperBound, base[lineEnd] != 0x0A { lineEnd += 1 }
            var contentEnd = lineEnd
            if contentEnd > line, base[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            if count == limits.maxHeaderCount { return .headersTooLarge }
            // RFC 9112 §5.2: obsolete line folding is rejected.
            if base[line] == 0x20 || base[line] == 0x09 { return .badRequest("Obsolete line folding is not accepted.") }
            var j = line
            while j < contentEnd, CharacterClass.isToken(base[j]) { j += 1 }
            // RFC 9112 §5.1: no whitespace between the field name and the colon.
            guard j > line, j < contentEnd, base[j] == 0x3A else { return .badRequest("Malformed header field.") }
            let name = UnsafeBufferPointer(start: base + line, count: j - line)
            j += 1
            while j < contentEnd, base[j] == 0x20 || base[j] == 0x09 { j += 1 }
            var valueEnd = contentEnd
            while valueEnd > j, base[valueEnd - 1] == 0x20 || base[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            var k = j
            while k < valueEnd {
                let c = base[k]
                // RFC 9110 §5.5: CR, LF, NUL and other controls are not allowed in a field value.
                if (c < 0x20 && c != 0x09) || c == 0x7F { return .badRequest("Control character in a header field.") }
                k += 1
            }
            if let field = IndexedField.recognize(name) { index.record(field, value: j..<valueEnd) }
            count += 1
            line = lineEnd + 1
        }
        index.fieldCount = count
        return nil
    }

    private static func deriveFraming(base: UnsafePointer<UInt8>, into index: inout RequestHeadIndex) -> RequestParseError? {
        let minor = index.minorVersion
        var contentLength: Int64?
        if let value = index.firstValue(of: .contentLength) {
            // RFC 9112 §6.3 and spec §7: any repeated Content-Length (or a list) is refused as smuggling.
            guard index.occurrences(of: .contentLength) == 1,
                  let n = parseContentLength(UnsafeBufferPointer(start: base + value.lowerBound, count: value.count)) else {
                return .badRequest("Invalid or repeated Content-Length.")
            }
            contentLength = n
        }
        let hostCount = index.occurrences(of: .host)
        if let value = index.firstValue(of: .host),
           !HostField.isValid(bytes: UnsafeBufferPointer(start: base + value.lowerBound, count: value.count)) {
            // RFC 9112 §3.2: a Host field with an invalid value is a 400.
            return .badRequest("Invalid Host header.")
        }
        // RFC 9112 §3.2: a 1.1 request has exactly one Host.
        if minor >= 1, hostCount != 1 { return .badRequest(hostCount == 0 ? "Missing Host header." : "Repeated Host header.") }
        if hostCount > 1 { return .badRequest("Repeated Host header.") }

        index.framing = .none
        if index.occurrences(of: .transferEncoding) > 0 {
            // RFC 9112 §6.1: Transfer-Encoding with Content-Length is refused (request smuggling).
            if contentLength != nil { return .badRequest("Content-Length together with Transfer-Encoding.") }
            if minor == 0 { return .badRequest("Transfer-Encoding in an HTTP/1.0 request.") }
            var codings = 0
            var lastIsChunked = false
            forEachElement(of: .transferEncoding, index: index, base: base) { element in
                codings += 1
                lastIsChunked = ASCIIBytes.equalsCaseInsensitive(element, 0..<element.count, "chunked")
            }
            guard codings > 0, lastIsChunked else { return .badRequest("The final transfer coding must be chunked.") }
            guard codings == 1 else { return .notImplemented("Only the chunked transfer coding is supported.") }
            index.framing = .chunked
        } else if let n = contentLength {
            index.framing = .contentLength(n)
        }

        // HTTP/1.0 is answered and closed (spec §4), whatever its Connection field says.
        var keepAlive = minor >= 1
        forEachElement(of: .connection, index: index, base: base) { token in
            if ASCIIBytes.equalsCaseInsensitive(token, 0..<token.count, "close") { keepAlive = false }
        }
        index.keepAlive = keepAlive

        // RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request MUST be ignored
        // (and §15.2: no 1xx response is sent to an HTTP/1.0 client).
        var expectsContinue = false
        if minor >= 1 {
            index.forEachValue(of: .expect, in: base) { value in
                let bytes = UnsafeBufferPointer(start: base + value.lowerBound, count: value.count)
                if ASCIIBytes.equalsCaseInsensitive(bytes, 0..<bytes.count, "100-continue") { expectsContinue = true }
            }
        }
        index.expectsContinue = expectsContinue
        return nil
    }

    /// Every non-empty comma-separated element of every value of `field`, without surrounding whitespace.
    private static func forEachElement(of field: IndexedField, index: RequestHeadIndex, base: UnsafePointer<UInt8>,
                                       _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        index.forEachValue(of: field, in: base) { value in
            var start = value.lowerBound
            while start <= value.upperBound {
                var end = start
                while end < value.upperBound, base[end] != 0x2C { end += 1 }
                let element = UnsafeBufferPointer(start: base + start, count: end - start)
                let trimmed = ASCIIBytes.trimmingWhitespace(element)
                if !trimmed.isEmpty { body(UnsafeBufferPointer(rebasing: element[trimmed])) }
                start = end + 1
            }
        }
    }

    /// `Content-Length = 1*DIGIT`, at most 18 digits (no overflow).
    static func parseContentLength(_ value: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !value.isEmpty, value.count <= 18 else { return nil }
        var n: Int64 = 0
        for c in value {
            guard CharacterClass.isDigit(c) else { return nil }
            n = n * 10 + Int64(c - 0x30)
        }
        return n
    }
}
