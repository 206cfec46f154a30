import DepotCore
import Testing

struct OldStylePropertyListTests {
    @Test func stringDictionaryIsRead() {
        let text = "{\n\t\"signature\" = \"AmoJ+/=\";\n\t\"pod\" = 100;\n\tbare_key = \"a \\\"quoted\\\" \\\\ value\\n\";\n}\n"
        #expect(OldStylePropertyList.stringDictionary(Array(text.utf8))
            == ["signature": "AmoJ+/=", "pod": "100", "bare_key": "a \"quoted\" \\ value\n"])
        #expect(OldStylePropertyList.stringDictionary(Array("{}".utf8)) == [:])
    }

    static let refused = [
        "", "hello", "(1, 2)", "{ \"a\" = \"b\" }", "{ \"a\" = \"b\"; } x", "{ \"a\" = { \"b\" = \"c\"; }; }",
        "{ \"a\" = ( \"b\" ); }", "{ \"a\" = <0fbd>; }", "{ \"a\" = \"b; }", "{ \"a\" = \"\\q\"; }",
        "{ \"a\" = \"1\"; \"a\" = \"2\"; }", "{ \"a\" \"b\"; }", "{ = \"b\"; }", "{ // comment\n }",
        String(repeating: "{", count: 100_000),
    ]

    @Test(arguments: refused)
    func otherShapesAreRefused(text: String) {
        #expect(OldStylePropertyList.stringDictionary(Array(text.utf8)) == nil)
    }

    @Test func invalidUTF8IsRefused() {
        #expect(OldStylePropertyList.stringDictionary([0x7B, 0x22, 0x61, 0x22, 0x3D, 0x22, 0xC3, 0x28, 0x22, 0x3B, 0x7D]) == nil)
    }
}
