import DepotCrypto
import Testing

struct HexTests {
    @Test func encodesLowercaseTwoDigitsPerByte() {
        #expect(Hex.encode([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
        #expect([UInt8]().hexString == "")
    }

    @Test func decodesEitherCase() {
        #expect(Hex.decode("000FA5ff") == [0x00, 0x0f, 0xa5, 0xff])
        #expect(Hex.decode("") == [])
    }

    @Test(arguments: ["0", "abc", "zz", "0g", " 00", "0x00"])
    func refusesMalformedHex(_ text: String) {
        #expect(Hex.decode(text) == nil)
    }
}
