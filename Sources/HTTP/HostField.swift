/// The syntax of a `Host` field value (RFC 9112 §3.2): `uri-host [ ":" port ]` with the `host` and `port`
/// rules of RFC 3986 §3.2.2–3.2.3. A request whose Host does not match is a `400` (RFC 9112 §3.2: MUST).
enum HostField {
    static func isValid(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { isValid(bytes: $0) }
    }

    static func isValid(bytes b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = b.count
        var i = 0
        if n > 0 && b[0] == UInt8(ascii: "[") {
            // IP-literal: "[" ( IPv6address / IPvFuture ) "]"; the characters of both, not their full grammar.
            i = 1
            while i < n && b[i] != UInt8(ascii: "]") {
                guard isUnreserved(b[i]) || isSubDelimiter(b[i]) || b[i] == UInt8(ascii: ":") else { return false }
                i += 1
            }
            guard i < n, i > 1 else { return false }
            i += 1
        } else {
            // IPv4address or reg-name = *( unreserved / pct-encoded / sub-delims ), possibly empty.
            while i < n && b[i] != UInt8(ascii: ":") {
                if b[i] == UInt8(ascii: "%") {
                    guard i + 2 < n, isHexDigit(b[i + 1]), isHexDigit(b[i + 2]) else { return false }
                    i += 3
                    continue
                }
                guard isUnreserved(b[i]) || isSubDelimiter(b[i]) else { return false }
                i += 1
            }
        }
        if i == n { return true }
        guard b[i] == UInt8(ascii: ":") else { return false }
        // port = *DIGIT
        i += 1
        while i < n {
            guard ASCIIBytes.isDigit(b[i]) else { return false }
            i += 1
        }
        return true
    }

    /// ALPHA / DIGIT / "-" / "." / "_" / "~"
    private static func isUnreserved(_ c: UInt8) -> Bool {
        ASCIIBytes.isAlphanumeric(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "~")
    }

    /// "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="
    private static func isSubDelimiter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="): true
        default: false
        }
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        ASCIIBytes.hexValue(c) != nil
    }
}
