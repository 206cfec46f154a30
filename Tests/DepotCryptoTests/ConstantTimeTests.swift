import DepotCrypto
import Testing

struct ConstantTimeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let a: [UInt8]
        let b: [UInt8]
        let equal: Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "both empty", a: [], b: [], equal: true),
        Case(name: "same bytes", a: [1, 2, 3, 4], b: [1, 2, 3, 4], equal: true),
        Case(name: "first byte differs", a: [0, 2, 3, 4], b: [1, 2, 3, 4], equal: false),
        Case(name: "last byte differs", a: [1, 2, 3, 4], b: [1, 2, 3, 5], equal: false),
        Case(name: "prefix is shorter", a: [1, 2, 3], b: [1, 2, 3, 4], equal: false),
        Case(name: "empty against non-empty", a: [], b: [0], equal: false),
        Case(name: "32-byte tags, one bit apart", a: [UInt8](repeating: 0xAB, count: 32),
             b: [UInt8](repeating: 0xAB, count: 31) + [0xAA], equal: false),
    ]

    @Test(arguments: cases)
    func equals(_ testCase: Case) {
        #expect(ConstantTime.equals(testCase.a, testCase.b) == testCase.equal)
        #expect(ConstantTime.equals(testCase.b, testCase.a) == testCase.equal)
    }
}
