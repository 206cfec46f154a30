import Testing
import HTTP

@Suite("Request targets (http-decisions.md \"Paths\")")
struct RequestTargetTests {
    @Test("path and query split at the first '?'", arguments: [
        ("/a/b", "/a/b", nil),
        ("/a/b?", "/a/b", ""),
        ("/a/b?x=1?y=2", "/a/b", "x=1?y=2"),
        ("/a%3Fb?x", "/a%3Fb", "x"),
    ] as [(String, String, String?)])
    func split(target: String, path: String, query: String?) {
        let t = RequestTarget(target)
        #expect(t.path == path)
        #expect(t.query == query)
    }

    @Test("segments are split first, then decoded once", arguments: [
        ("/", [""]),
        ("/a", ["a"]),
        ("/a/", ["a", ""]),
        ("//a", ["", "a"]),
        ("/v1/packs/level2/3/files/stages.bin", ["v1", "packs", "level2", "3", "files", "stages.bin"]),
        ("/files/a%20b", ["files", "a b"]),
        ("/files/a+b", ["files", "a+b"]),             // "+" is literal in a path
        ("/files/%2541", ["files", "%41"]),           // decoded exactly once
        ("/files/caf%C3%A9", ["files", "café"]),
        ("/files/caf%c3%a9", ["files", "café"]),      // lowercase hex
        ("/files/a..b", ["files", "a..b"]),
        ("/files/...", ["files", "..."]),
        ("/files/.hidden", ["files", ".hidden"]),
    ])
    func segments(target: String, expected: [String]) throws {
        #expect(try RequestTarget(target).pathSegments() == expected)
    }

    @Test("traversal and malformed paths are refused", arguments: [
        "/files/..", "/files/../etc/passwd", "/files/.", "/./files", "/..",
        "/files/%2e%2e", "/files/%2E%2E", "/files/.%2e", "/files/%2e",
        "/files/a%2fb", "/files/%2F..%2F", "/files/..%2f..%2fetc",
        "/files/a%5cb", "/files/a\\b", "/files/..%5c..",
        "/files/a%00b", "/files/%00",
        "/files/%", "/files/%4", "/files/%zz", "/files/%g0",
        "/files/%C3", "/files/%FF",                    // not UTF-8 once decoded
        "files/a", "", "*", "http://example.com/a",  // leading "/" required
    ])
    func malformed(target: String) {
        #expect(throws: RequestTarget.PathError.malformed) { try RequestTarget(target).pathSegments() }
    }

    @Test("query items, in order, '+' and '%20' both space", arguments: [
        ("/m?a=1&b=2", [("a", "1"), ("b", "2")]),
        ("/m?q=a+b", [("q", "a b")]),
        ("/m?q=a%20b", [("q", "a b")]),
        ("/m?q=a%2Bb", [("q", "a+b")]),
        ("/m?a+b=c", [("a b", "c")]),
        ("/m?flag", [("flag", "")]),
        ("/m?a=", [("a", "")]),
        ("/m?=v", [("", "v")]),
        ("/m?a=1&&b=2&", [("a", "1"), ("b", "2")]),   // empty parameters skipped
        ("/m?a=b=c", [("a", "b=c")]),
        ("/m?a=1&a=2", [("a", "1"), ("a", "2")]),
        ("/m?p=%", [("p", "%")]),                     // malformed escapes kept literally
        ("/m?p=%4", [("p", "%4")]),
        ("/m?p=%zz%41", [("p", "%zzA")]),
        ("/m?p=caf%C3%A9", [("p", "café")]),
        ("/m?p=%FF", [("p", "\u{FFFD}")]),            // invalid UTF-8 becomes U+FFFD
        ("/m?", []),
        ("/m", []),
    ])
    func queryItems(target: String, expected: [(String, String)]) {
        let items = RequestTarget(target).queryItems()
        #expect(items.map(\.name) == expected.map(\.0))
        #expect(items.map(\.value) == expected.map(\.1))
    }

    @Test("queryValue returns the first occurrence")
    func queryValue() {
        let target = RequestTarget("/v1/packs/level2/3/manifest?available=1000&have=0&have=5&token=a%2Bb+c")
        #expect(target.queryValue("available") == "1000")
        #expect(target.queryValue("have") == "0")
        #expect(target.queryValue("token") == "a+b c")
        #expect(target.queryValue("Available") == nil)
        #expect(target.queryValue("missing") == nil)
    }
}
