import HTTP

/// ASCII helpers over a field value's bytes.
enum ASCIIText {
    /// `range` without surrounding SP / HTAB.
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return start..<end
    }

    /// Whether `bytes[range]` is `literal` (lower-case letters), ignoring letter case.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for k in 0..<range.count {
            let c = bytes[range.lowerBound + k]
            let lowered = (c >= 0x41 && c <= 0x5A) ? c + 0x20 : c
            if lowered != expected[k] { return false }
        }
        return true
    }
}

/// The conditional and range fields of a request, gathered in one pass over its header fields.
struct RequestConditions {
    var preconditions = Preconditions()
    var range: [String] = []
    /// No conditional or range field at all: the common case, answered from precomputed responses.
    var isEmpty = true

    init(_ fields: HTTPFields) {
        for field in fields {
            switch field.name {
            case "if-match": preconditions.ifMatch.append(field.value); isEmpty = false
            case "if-none-match": preconditions.ifNoneMatch.append(field.value); isEmpty = false
            case "if-modified-since": preconditions.ifModifiedSince.append(field.value); isEmpty = false
            case "if-unmodified-since": preconditions.ifUnmodifiedSince.append(field.value); isEmpty = false
            case "if-range": preconditions.ifRange.append(field.value); isEmpty = false
            case "range": range.append(field.value); isEmpty = false
            default: break
            }
        }
    }
}

/// `Accept-Encoding` negotiation (RFC 9110 §12.5.3) between gzip and identity.
enum AcceptEncoding {
    /// The same decision on the head's bytes; nil when a value is unusual (a q-value that is not a plain decimal
    /// with at most three decimals), for `choosesGzip(_:)` to decide.
    static func choosesGzip(_ head: RawRequestHead) -> Bool? {
        var gzipQ: Int?
        var identityQ: Int?
        var anyQ: Int?
        var usual = true
        head.forEachValue(.acceptEncoding) { value in
            var start = 0
            while usual, start <= value.count {
                var end = start
                while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
                if let (coding, q) = element(UnsafeBufferPointer(rebasing: value[start..<end])) {
                    switch coding {
                    case .gzip: gzipQ = max(gzipQ ?? 0, q)
                    case .identity: identityQ = max(identityQ ?? 0, q)
                    case .any: anyQ = q
                    case .other: break
                    case .unusual: usual = false
                    }
                }
                start = end + 1
            }
        }
        guard usual else { return nil }
        return choosesGzip(gzip: gzipQ, identity: identityQ, any: anyQ)
    }

    /// The decision from the q-values found (nil: the coding is not named): gzip when it is acceptable (named with
    /// q > 0, or covered by `*` with q > 0 when not named) and identity is not preferred to it, that is identity's
    /// q (named, or `*`'s when not named) is not higher than gzip's; equal keeps gzip, the smaller answer. A field
    /// that names neither identity nor `*` states no preference for identity (`gzip;q=0.5` alone keeps gzip).
    private static func choosesGzip<Q: Comparable & AdditiveArithmetic>(gzip: Q?, identity: Q?, any: Q?) -> Bool {
        guard let gzipQ = gzip ?? any, gzipQ > .zero else { return false }
        if let identityQ = identity ?? any, identityQ > gzipQ { return false }
        return true
    }

    private enum Coding { case gzip, identity, any, other, unusual }

    /// One list element: its coding and its q-value in thousandths; nil for an empty element.
    private static func element(_ bytes: UnsafeBufferPointer<UInt8>) -> (Coding, Int)? {
        var end = 0
        while end < bytes.count, bytes[end] != UInt8(ascii: ";") { end += 1 }
        let name = ASCIIText.trimmed(bytes, 0..<end)
        guard !name.isEmpty else { return end == bytes.count ? nil : (.other, 1000) }
        let coding: Coding
        if ASCIIText.equalsIgnoringCase(bytes, name, "gzip") || ASCIIText.equalsIgnoringCase(bytes, name, "x-gzip") {
            coding = .gzip
        } else if ASCIIText.equalsIgnoringCase(bytes, name, "identity") {
            coding = .identity
        } else if name.count == 1, bytes[name.lowerBound] == UInt8(ascii: "*") {
            coding = .any
        } else {
            coding = .other
        }
        var q = 1000
        var parameterStart = end + 1
        while parameterStart <= bytes.count {
            var parameterEnd = parameterStart
            while parameterEnd < bytes.count, bytes[parameterEnd] != UInt8(ascii: ";") { parameterEnd += 1 }
            let parameter = ASCIIText.trimmed(bytes, parameterStart..<min(parameterEnd, bytes.count))
            if parameter.count >= 2, bytes[parameter.lowerBound] | 0x20 == UInt8(ascii: "q"), bytes[parameter.lowerBound + 1] == UInt8(ascii: "=") {
                guard let value = qValue(bytes, (parameter.lowerBound + 2)..<parameter.upperBound) else { return (.unusual, 0) }
                q = value
            }
            parameterStart = parameterEnd + 1
        }
        return (coding, q)
    }

    /// `1*3DIGIT [ "." *3DIGIT ]` in thousandths, exactly (RFC 9110 §12.4.2 allows three decimals, so values can be
    /// compared); nil for anything else.
    private static func qValue(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var i = range.lowerBound
        var whole = 0
        while i < range.upperBound, bytes[i] &- 0x30 < 10 {
            whole = whole * 10 + Int(bytes[i] &- 0x30)
            i += 1
        }
        guard i > range.lowerBound, i - range.lowerBound <= 3 else { return nil }
        var thousandths = whole * 1000
        if i < range.upperBound {
            guard bytes[i] == UInt8(ascii: ".") else { return nil }
            i += 1
            var scale = 100
            while i < range.upperBound, bytes[i] &- 0x30 < 10 {
                guard scale > 0 else { return nil }
                thousandths += Int(bytes[i] &- 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i == range.upperBound else { return nil }
        }
        return thousandths
    }

    /// Whether the gzip variant is sent (see `choosesGzip(gzip:identity:any:)`).
    static func choosesGzip(_ fields: HTTPFields) -> Bool {
        var gzipQ: Double?
        var identityQ: Double?
        var anyQ: Double?
        for field in fields where field.name == "accept-encoding" {
            for element in field.value.split(separator: ",") {
                let parts = element.split(separator: ";")
                guard let first = parts.first else { continue }
                let coding = first.trimmingOWS().lowercased()
                var q = 1.0
                for parameter in parts.dropFirst() {
                    let p = parameter.trimmingOWS()
                    if p.lowercased().hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
                }
                switch coding {
                case "gzip", "x-gzip": gzipQ = max(gzipQ ?? 0, q)
                case "identity": identityQ = max(identityQ ?? 0, q)
                case "*": anyQ = q
                default: break
                }
            }
        }
        return choosesGzip(gzip: gzipQ, identity: identityQ, any: anyQ)
    }
}
