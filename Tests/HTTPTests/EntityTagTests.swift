import Testing
import HTTP

@Suite("Entity tags (RFC 9110 §8.8.3)")
struct EntityTagTests {
    @Test("well-formed tags parse", arguments: [
        ("\"xyzzy\"", "xyzzy", false),
        ("W/\"xyzzy\"", "xyzzy", true),
        ("\"\"", "", false),
        ("W/\"\"", "", true),
        (" \"a,b\"\t", "a,b", false),        // a comma is an etagc; OWS around is ignored
        ("\"!#~\"", "!#~", false),
        ("\"café\"", "café", false),         // obs-text
    ])
    func parses(value: String, opaque: String, weak: Bool) {
        #expect(EntityTag(parsing: value) == EntityTag(opaqueTag: opaque, isWeak: weak))
    }

    @Test("malformed tags are nil", arguments: [
        "", "xyzzy", "\"xyzzy", "xyzzy\"", "w/\"xyzzy\"", "W/xyzzy", "W /\"x\"", "\"x\"y", "\"x\" \"y\"",
        "\"a b\"", "\"a\tb\"", "\"a\u{7F}\"", "*", "\"x\",",
    ])
    func malformed(value: String) {
        #expect(EntityTag(parsing: value) == nil)
    }

    @Test("header value round-trips", arguments: [
        EntityTag(opaqueTag: "abc"), EntityTag(opaqueTag: "abc", isWeak: true), EntityTag(opaqueTag: ""),
    ])
    func headerValue(tag: EntityTag) {
        #expect(EntityTag(parsing: tag.headerValue) == tag)
        #expect(tag.headerValue == (tag.isWeak ? "W/\"\(tag.opaqueTag)\"" : "\"\(tag.opaqueTag)\""))
    }

    // RFC 9110 §8.8.3.2, the table of examples.
    @Test("strong and weak comparison", arguments: [
        ("W/\"1\"", "W/\"1\"", false, true),
        ("W/\"1\"", "W/\"2\"", false, false),
        ("W/\"1\"", "\"1\"", false, true),
        ("\"1\"", "\"1\"", true, true),
        ("\"1\"", "\"2\"", false, false),
    ])
    func comparison(a: String, b: String, strong: Bool, weak: Bool) throws {
        let x = try #require(EntityTag(parsing: a))
        let y = try #require(EntityTag(parsing: b))
        #expect(x.matchesStrongly(y) == strong)
        #expect(y.matchesStrongly(x) == strong)
        #expect(x.matchesWeakly(y) == weak)
        #expect(y.matchesWeakly(x) == weak)
    }

    @Test("lists: elements across field lines, OWS and empty elements", arguments: [
        ([String](), EntityTag.ListMatch.absent),
        (["", " , ,"], .absent),
        (["*"], .matched),
        ([" * "], .matched),
        (["\"a\", \"b\""], .unmatched),
        (["\"a\"", "\"cur\""], .matched),           // second field line
        (["\"a\",,  \"cur\" ,"], .matched),
        (["\"a\", W/\"cur\""], .matched),            // weak comparison here
        (["*, \"a\""], .malformed),                  // "*" is the whole value or nothing
        (["*", "\"a\""], .malformed),
        (["\"a\" \"cur\""], .malformed),
        (["\"cur\", junk"], .malformed),             // malformed anywhere → malformed
        (["\"a,cur\""], .unmatched),                 // a comma inside quotes does not split
    ])
    func weakList(values: [String], expected: EntityTag.ListMatch) {
        #expect(EntityTag.compare(list: values, with: EntityTag(opaqueTag: "cur"), strongly: false) == expected)
    }

    @Test("lists with strong comparison never match a weak tag")
    func strongList() {
        let strong = EntityTag(opaqueTag: "cur")
        let weak = EntityTag(opaqueTag: "cur", isWeak: true)
        #expect(EntityTag.compare(list: ["\"cur\""], with: strong, strongly: true) == .matched)
        #expect(EntityTag.compare(list: ["W/\"cur\""], with: strong, strongly: true) == .unmatched)
        #expect(EntityTag.compare(list: ["\"cur\""], with: weak, strongly: true) == .unmatched)
        #expect(EntityTag.compare(list: ["*"], with: nil, strongly: true) == .matched)
        #expect(EntityTag.compare(list: ["\"cur\""], with: nil, strongly: true) == .unmatched)
    }
}
