import DepotCrypto
import Testing

/// Attribute record sets (App Store receipt payloads) read and written with libcrypto's ASN.1.
struct ASN1RecordSetTests {
    @Test func recordsRoundTrip() throws {
        let inner = ASN1RecordSet.encode([ASN1Record(type: 1703, value: ASN1RecordSet.utf8StringDER("2000000909538865"))])
        let records = [
            ASN1Record(type: 2, value: ASN1RecordSet.utf8StringDER("com.example.depot")),
            ASN1Record(type: 12, version: 2, value: ASN1RecordSet.ia5StringDER("2026-11-29T10:00:00Z")),
            ASN1Record(type: 17, value: inner),
            ASN1Record(type: 1701, value: ASN1RecordSet.integerDER(300)),
        ]
        let parsed = try ASN1RecordSet.parse(ASN1RecordSet.encode(records))
        #expect(Set(parsed.map(\.type)) == [2, 12, 17, 1701])
        #expect(parsed.first { $0.type == 12 }?.version == 2)
        #expect(ASN1RecordSet.string(fromDER: parsed.first { $0.type == 2 }!.value) == "com.example.depot")
        #expect(ASN1RecordSet.string(fromDER: parsed.first { $0.type == 12 }!.value) == "2026-11-29T10:00:00Z")
        let nested = try ASN1RecordSet.parse(parsed.first { $0.type == 17 }!.value)
        #expect(nested.count == 1 && ASN1RecordSet.string(fromDER: nested[0].value) == "2000000909538865")
    }

    @Test func emptySetHasNoRecords() throws {
        #expect(try ASN1RecordSet.parse([0x31, 0x00]).isEmpty)
    }

    @Test func encodingIsDER() {
        // SET { SEQUENCE { INTEGER 2, INTEGER 1, OCTET STRING { UTF8String "a" } } }
        let der = ASN1RecordSet.encode([ASN1Record(type: 2, value: ASN1RecordSet.utf8StringDER("a"))])
        #expect(der == [0x31, 0x0D, 0x30, 0x0B, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x03, 0x0C, 0x01, 0x61])
    }

    static let malformed: [(String, [UInt8])] = [
        ("empty", []),
        ("a SEQUENCE, not a SET", [0x30, 0x00]),
        ("length beyond the data", [0x31, 0x05, 0x30, 0x00]),
        ("indefinite length", [0x31, 0x80, 0x00, 0x00]),
        ("bytes after the SET", [0x31, 0x00, 0x00]),
        ("member not a SEQUENCE", [0x31, 0x02, 0x02, 0x00]),
        ("type not an INTEGER", [0x31, 0x08, 0x30, 0x06, 0x04, 0x01, 0x02, 0x02, 0x01, 0x01]),
        ("missing value", [0x31, 0x08, 0x30, 0x06, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01]),
        ("a fourth field", [0x31, 0x0D, 0x30, 0x0B, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x00, 0x02, 0x01, 0x00]),
        ("member longer than the SET", [0x31, 0x04, 0x30, 0x08, 0x02, 0x01]),
        ("huge type", [0x31, 0x11, 0x30, 0x0F, 0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x01, 0x01, 0x04, 0x00]),
    ]

    @Test(arguments: malformed)
    func malformedSetsAreRefused(name: String, der: [UInt8]) {
        #expect(throws: ASN1RecordSet.Failure.self) { try ASN1RecordSet.parse(der) }
    }

    @Test func stringsOfOtherTypesAreNotText() {
        #expect(ASN1RecordSet.string(fromDER: ASN1RecordSet.integerDER(5)) == nil)
        #expect(ASN1RecordSet.string(fromDER: []) == nil)
        #expect(ASN1RecordSet.string(fromDER: ASN1RecordSet.utf8StringDER("x") + [0]) == nil)
        // A UTF8String whose bytes are not UTF-8.
        #expect(ASN1RecordSet.string(fromDER: [0x0C, 0x02, 0xC3, 0x28]) == nil)
    }
}
