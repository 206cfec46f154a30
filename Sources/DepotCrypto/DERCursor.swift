import COpenSSL

/// Reads DER one element at a time with libcrypto's `ASN1_get_object` (tag, class, definite
/// length), without decoding what the elements hold. Indefinite lengths (BER), headers that run past
/// the data and lengths beyond the enclosing element are refused (`next()` returns nil).
struct DERCursor {
    /// One element: its identifier and where its content octets lie in the bytes.
    struct Element {
        let tag: Int32
        let tagClass: Int32
        let isConstructed: Bool
        /// The content octets (after the header), as indices into the cursor's bytes.
        let content: Range<Int>
    }

    let bytes: [UInt8]
    private(set) var position: Int
    let end: Int

    /// A cursor over all of `bytes`.
    init(_ bytes: [UInt8]) {
        self.init(bytes, range: 0..<bytes.count)
    }

    private init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
    }

    var isAtEnd: Bool { position >= end }

    /// The next element, or nil (nothing is consumed) when what follows is not a definite-length DER
    /// element inside this cursor's range.
    mutating func next() -> Element? {
        guard position < end else { return nil }
        let start = position, available = end - position
        let parsed: (flags: Int32, header: Int, length: Int, tag: Int32, tagClass: Int32)? = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base + start
            var length = 0
            var tag: Int32 = 0
            var tagClass: Int32 = 0
            let flags = ASN1_get_object(&cursor, &length, &tag, &tagClass, available)
            guard let after = cursor else { return nil }
            return (flags, base.distance(to: after) - start, length, tag, tagClass)
        }
        guard let parsed, parsed.flags & 0x80 == 0 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        // Bit 0 set: indefinite length (BER), which DER never uses.
        guard parsed.flags & 1 == 0, parsed.length >= 0, parsed.header > 0, parsed.length <= available - parsed.header else { return nil }
        let contentStart = start + parsed.header
        position = contentStart + parsed.length
        return Element(tag: parsed.tag, tagClass: parsed.tagClass, isConstructed: parsed.flags & V_ASN1_CONSTRUCTED != 0,
                       content: contentStart..<position)
    }

    /// The next element if it is a universal one with `tag` (constructed or primitive as asked); else nil.
    mutating func next(universal tag: Int32, constructed: Bool) -> Element? {
        var copy = self
        guard let element = copy.next(), element.tagClass == V_ASN1_UNIVERSAL, element.tag == tag,
              element.isConstructed == constructed else { return nil }
        self = copy
        return element
    }

    /// The next element if it is a constructed context-specific `[tag]`; else nil (nothing consumed).
    mutating func next(context tag: Int32) -> Element? {
        var copy = self
        guard let element = copy.next(), element.tagClass == V_ASN1_CONTEXT_SPECIFIC, element.tag == tag,
              element.isConstructed else { return nil }
        self = copy
        return element
    }

    /// A cursor over the content octets of `element`.
    func inside(_ element: Element) -> DERCursor {
        DERCursor(bytes, range: element.content)
    }

    /// The content octets of `element`.
    func content(of element: Element) -> [UInt8] {
        Array(bytes[element.content])
    }
}
