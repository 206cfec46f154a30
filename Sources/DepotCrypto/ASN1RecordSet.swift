import COpenSSL

/// One `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }` of an App Store receipt's
/// attribute set (the payload of an app receipt and of each of its in-app purchase records).
public struct ASN1Record: Sendable, Equatable {
    /// The attribute type (e.g. 17 for an in-app purchase, 1703 for a transaction ID).
    public var type: Int64
    /// The attribute version (Apple leaves it undocumented).
    public var version: Int64
    /// The DER of the attribute's value, as carried in the OCTET STRING.
    public var value: [UInt8]

    /// A record with the given fields.
    public init(type: Int64, version: Int64 = 1, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }
}

/// DER `SET OF` attribute records, read and written with libcrypto's ASN.1 functions
/// (`ASN1_get_object` for the SET and SEQUENCE headers, `d2i_`/`i2d_` for the fields).
public enum ASN1RecordSet {
    /// Why bytes are not an attribute set.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Reads a DER `SET` of records. Anything else — another outer type, indefinite lengths, a
    /// member that is not exactly the three fields, bytes after the SET — is refused.
    public static func parse(_ der: [UInt8]) throws(Failure) -> [ASN1Record] {
        try der.withUnsafeBufferPointer { buffer throws(Failure) in
            guard let base = buffer.baseAddress, buffer.count > 0 else { throw Failure(reason: "empty attribute set") }
            var cursor: UnsafePointer<UInt8>? = base
            let setLength = try header(&cursor, available: buffer.count, tag: V_ASN1_SET, what: "attribute set")
            let end = cursor! + setLength
            guard end == base + buffer.count else { throw Failure(reason: "bytes after the attribute set") }
            var records: [ASN1Record] = []
            while cursor! < end {
                let sequenceLength = try header(&cursor, available: end - cursor!, tag: V_ASN1_SEQUENCE, what: "attribute")
                let sequenceEnd = cursor! + sequenceLength
                let type = try integer(&cursor, end: sequenceEnd)
                let version = try integer(&cursor, end: sequenceEnd)
                let value = try octets(&cursor, end: sequenceEnd)
                guard cursor! == sequenceEnd else { throw Failure(reason: "an attribute has more than three fields") }
                records.append(ASN1Record(type: type, version: version, value: value))
            }
            return records
        }
    }

    /// Writes records as a DER `SET OF` (members sorted by their encoding, as DER requires).
    public static func encode(_ records: [ASN1Record]) -> [UInt8] {
        let members = records.map { record in
            constructed(tag: V_ASN1_SEQUENCE, body: integerDER(record.type) + integerDER(record.version)
                + stringDER(record.value, make: { ASN1_OCTET_STRING_new() }, encode: { i2d_ASN1_OCTET_STRING($0, $1) }))
        }
        return constructed(tag: V_ASN1_SET, body: members.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
    }

    /// The text of a DER UTF8String (or IA5String, which some receipt fields use); nil otherwise.
    public static func string(fromDER der: [UInt8]) -> String? {
        der.withUnsafeBufferPointer { buffer -> String? in
            for decode in [{ d2i_ASN1_UTF8STRING(nil, $0, $1) }, { d2i_ASN1_IA5STRING(nil, $0, $1) }] as
                [(UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> UnsafeMutablePointer<ASN1_STRING>?] {
                var cursor = buffer.baseAddress
                guard let value = decode(&cursor, buffer.count) else { continue }
                defer { ASN1_STRING_free(value) }
                guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else { continue }
                let length = Int(ASN1_STRING_length(value))
                guard length > 0, let bytes = ASN1_STRING_get0_data(value) else { return "" }
                return String(validating: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
            }
            OpenSSLErrorQueue.clear()
            return nil
        }
    }

    /// The DER of a UTF8String.
    public static func utf8StringDER(_ text: String) -> [UInt8] {
        stringDER(Array(text.utf8), make: { ASN1_UTF8STRING_new() }, encode: { i2d_ASN1_UTF8STRING($0, $1) })
    }

    /// The DER of an IA5String (ASCII text such as receipt dates).
    public static func ia5StringDER(_ text: String) -> [UInt8] {
        stringDER(Array(text.utf8), make: { ASN1_IA5STRING_new() }, encode: { i2d_ASN1_IA5STRING($0, $1) })
    }

    /// The DER of an INTEGER.
    public static func integerDER(_ value: Int64) -> [UInt8] {
        guard let integer = ASN1_INTEGER_new() else { return [] }
        defer { ASN1_INTEGER_free(integer) }
        guard ASN1_INTEGER_set_int64(integer, value) == 1 else { return [] }
        return encoded(integer) { i2d_ASN1_INTEGER($0, $1) }
    }

    // MARK: - Reading

    /// Reads a definite-length constructed universal header with `tag`; returns the content length.
    private static func header(_ cursor: inout UnsafePointer<UInt8>?, available: Int, tag expected: Int32,
                               what: String) throws(Failure) -> Int {
        var length = 0
        var tag: Int32 = 0
        var tagClass: Int32 = 0
        let start = cursor
        let flags = ASN1_get_object(&cursor, &length, &tag, &tagClass, available)
        guard flags & 0x80 == 0 else {
            OpenSSLErrorQueue.clear()
            throw Failure(reason: "\(what): malformed DER header or length beyond the data")
        }
        guard flags == V_ASN1_CONSTRUCTED, tag == expected, tagClass == V_ASN1_UNIVERSAL else {
            throw Failure(reason: "\(what): expected a DER \(expected == V_ASN1_SET ? "SET" : "SEQUENCE")")
        }
        guard let start, let cursor, length >= 0, length <= available - (cursor - start) else {
            throw Failure(reason: "\(what): length beyond the data")
        }
        return length
    }

    private static func integer(_ cursor: inout UnsafePointer<UInt8>?, end: UnsafePointer<UInt8>) throws(Failure) -> Int64 {
        guard let position = cursor, position < end, let value = d2i_ASN1_INTEGER(nil, &cursor, end - position) else {
            OpenSSLErrorQueue.clear()
            throw Failure(reason: "an attribute's type or version is not an INTEGER")
        }
        defer { ASN1_INTEGER_free(value) }
        var number: Int64 = 0
        guard ASN1_INTEGER_get_int64(&number, value) == 1 else {
            OpenSSLErrorQueue.clear()
            throw Failure(reason: "an attribute's type or version does not fit 64 bits")
        }
        return number
    }

    private static func octets(_ cursor: inout UnsafePointer<UInt8>?, end: UnsafePointer<UInt8>) throws(Failure) -> [UInt8] {
        guard let position = cursor, position < end, let value = d2i_ASN1_OCTET_STRING(nil, &cursor, end - position) else {
            OpenSSLErrorQueue.clear()
            throw Failure(reason: "an attribute's value is not an OCTET STRING")
        }
        defer { ASN1_OCTET_STRING_free(value) }
        let length = Int(ASN1_STRING_length(value))
        guard length > 0, let bytes = ASN1_STRING_get0_data(value) else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    // MARK: - Writing

    private static func constructed(tag: Int32, body: [UInt8]) -> [UInt8] {
        let size = ASN1_object_size(1, Int32(body.count), tag)
        guard size > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let headerLength = bytes.withUnsafeMutableBufferPointer { buffer -> Int in
            var cursor = buffer.baseAddress
            ASN1_put_object(&cursor, 1, Int32(body.count), tag, V_ASN1_UNIVERSAL)
            return buffer.baseAddress!.distance(to: cursor!)
        }
        bytes.replaceSubrange(headerLength..., with: body)
        return bytes
    }

    private static func stringDER(_ bytes: [UInt8], make: () -> UnsafeMutablePointer<ASN1_STRING>?,
                                  encode: (UnsafeMutablePointer<ASN1_STRING>, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8] {
        guard let string = make() else { return [] }
        defer { ASN1_STRING_free(string) }
        guard ASN1_STRING_set(string, bytes, Int32(bytes.count)) == 1 else { return [] }
        return encoded(string, encode)
    }

    private static func encoded(_ object: UnsafeMutablePointer<ASN1_STRING>,
                                _ encode: (UnsafeMutablePointer<ASN1_STRING>, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8] {
        let length = encode(object, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = encode(object, &cursor)
        }
        return bytes
    }
}
