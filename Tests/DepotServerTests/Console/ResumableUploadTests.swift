import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import HTTP
import Testing

/// Issue 16: the resumable admin upload — `PUT` with `Content-Range` appends a piece, `GET`/`HEAD` on the upload
/// path says how much arrived (`Upload-Offset`); a cut connection and a restart lose only what never arrived.
@Suite("Console: resumable uploads")
struct ResumableUploadTests {
    static let adminToken = ConsoleSignInTests.adminToken
    static let bearer = ("Authorization", "Bearer \(ConsoleSignInTests.adminToken)")

    static func file(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    static func status(_ http: ConsoleHTTP, _ path: String) async throws -> (received: Int, size: Int, complete: Bool, offset: String?) {
        let response = try await http.send("GET", path, [bearer])
        #expect(response.status == 200, "\(response.text)")
        let json = ConsoleHTTP.json(response)
        return (json["receivedBytes"] as? Int ?? -1, json["size"] as? Int ?? -1, json["complete"] as? Bool ?? false, response.header("Upload-Offset"))
    }

    @Test func piecesAppendAndACutConnectionAndARestartKeepWhatArrived() async throws {
        var depot = try await TestDepot.start { $0.adminToken = Self.adminToken }
        let tree = depot.tree
        var http = ConsoleHTTP(port: depot.port)
        let path = "/admin/v1/packs/level8/1/files/data/stages.bin"
        let bytes = Self.file(300_000)
        let digest = Hex.encode(SHA256.hash(bytes))
        // Nothing yet: 0 of 0.
        var state = try await Self.status(http, path)
        #expect(state.received == 0 && !state.complete && state.offset == "0")
        let head = try await http.send("HEAD", path, [Self.bearer])
        #expect(head.status == 200 && head.header("Upload-Offset") == "0")

        let first = try await http.send("PUT", path, [Self.bearer, ("Content-Range", "bytes 0-99999/300000"), ("X-Content-SHA256", digest)],
                                        body: Array(bytes[0..<100_000]))
        #expect(first.status == 200, "\(first.text)")
        #expect(first.header("Upload-Offset") == "100000" && ConsoleHTTP.json(first)["complete"] as? Bool == false)
        state = try await Self.status(http, path)
        #expect(state.received == 100_000 && state.size == 300_000 && state.offset == "100000")

        // A piece that does not start where the server's copy ends changes nothing.
        let gap = try await http.send("PUT", path, [Self.bearer, ("Content-Range", "bytes 150000-199999/300000")], body: Array(bytes[150_000..<200_000]))
        #expect(gap.status == 409 && ConsoleHTTP.errorCode(gap) == "upload_offset_mismatch" && gap.header("Upload-Offset") == "100000")
        // Publishing is refused while the file is incomplete.
        let early = try await http.send("POST", "/admin/v1/packs/level8/1/publish", [Self.bearer, ("Content-Type", "application/json")],
                                        body: Array("{\"id\": \"com.example.depot.level8\", \"type\": \"non-consumable\", \"title\": \"Eight\"}".utf8))
        #expect(early.status == 400 && early.text.contains("still in progress"), "\(early.text)")

        // A piece cut after 40,000 of its 100,000 bytes: those 40,000 stay.
        try await http.sendCut(path, [Self.bearer, ("Content-Range", "bytes 100000-199999/300000")], declaredLength: 100_000,
                               sent: Array(bytes[100_000..<140_000]))
        try await Self.waitFor { try await Self.status(http, path).received == 140_000 }

        // A restart keeps the partial (only the non-resumable `.partial-*` scratch files are removed).
        await depot.stop()
        depot = try await TestDepot.start(tree: tree) { $0.adminToken = Self.adminToken }
        http = ConsoleHTTP(port: depot.port)
        state = try await Self.status(http, path)
        #expect(state.received == 140_000 && state.size == 300_000)

        let last = try await http.send("PUT", path, [Self.bearer, ("Content-Range", "bytes 140000-299999/300000"), ("X-Content-SHA256", digest)],
                                       body: Array(bytes[140_000...]))
        #expect(last.status == 201, "\(last.text)")
        #expect(ConsoleHTTP.json(last)["sha256"] as? String == digest && ConsoleHTTP.json(last)["size"] as? Int == 300_000)
        state = try await Self.status(http, path)
        #expect(state.complete && state.received == 300_000)
        let publish = try await http.send("POST", "/admin/v1/packs/level8/1/publish", [Self.bearer, ("Content-Type", "application/json")],
                                          body: Array("{\"id\": \"com.example.depot.level8\", \"type\": \"non-consumable\", \"title\": \"Eight\"}".utf8))
        #expect(publish.status == 201, "\(publish.text)")
        #expect(FileManager.default.contents(atPath: depot.contentDirectory + "/level8/1/data/stages.bin") == Data(bytes))
        let leftovers = FileTree.relativeFiles(under: depot.contentDirectory + "/level8/1").filter { $0.contains(".resume-") }
        #expect(leftovers.isEmpty)
        await depot.stop()
    }

    @Test func aWrongDigestAtTheEndKeepsNothingAndBadRangesAreRefused() async throws {
        let depot = try await TestDepot.start { $0.adminToken = Self.adminToken }
        defer { Task { await depot.stop() } }
        let http = ConsoleHTTP(port: depot.port)
        let path = "/admin/v1/packs/level8/1/files/a.bin"
        let bytes = Self.file(2000)
        #expect(try await http.send("PUT", path, [Self.bearer, ("Content-Range", "bytes 0-999/2000")], body: Array(bytes[0..<1000])).status == 200)
        let wrong = try await http.send("PUT", path, [Self.bearer, ("Content-Range", "bytes 1000-1999/2000"), ("X-Content-SHA256", String(repeating: "0", count: 64))],
                                        body: Array(bytes[1000...]))
        #expect(wrong.status == 400 && ConsoleHTTP.errorCode(wrong) == "digest_mismatch")
        let state = try await Self.status(http, path)
        #expect(state.received == 0 && !state.complete)
        for range in ["bytes 0-999/500", "bytes 10-5/2000", "bytes 0-999/*", "items 0-999/2000", "bytes 0-998/2000", "bytes -1-998/2000"] {
            let refused = try await http.send("PUT", path, [Self.bearer, ("Content-Range", range)], body: Array(bytes[0..<1000]))
            #expect(refused.status == 400, "\(range): \(refused.text)")
        }
        // A new upload of another size from byte 0 replaces an unfinished one.
        #expect(try await http.send("PUT", path, [Self.bearer, ("Content-Range", "bytes 0-999/2000")], body: Array(bytes[0..<1000])).status == 200)
        let other = try await http.send("PUT", path, [Self.bearer, ("Content-Range", "bytes 0-499/500")], body: Array(bytes[0..<500]))
        #expect(other.status == 201)
        let done = try await Self.status(http, path)
        #expect(done.complete && done.size == 500)
        #expect(FileTree.relativeFiles(under: depot.contentDirectory + "/.staging/uploads/level8/1") == ["a.bin"])
    }

    @Test func contentRangeParsing() throws {
        var fields = HTTPFields()
        fields.append("Content-Range", "bytes 5-9/20")
        #expect(try ContentRange.parse(fields, declaredLength: 5) == ContentRange(first: 5, last: 9, total: 20))
        #expect(throws: AdminFailure.self) { try ContentRange.parse(fields, declaredLength: nil) }
        #expect(throws: AdminFailure.self) { try ContentRange.parse(fields, declaredLength: 4) }
        #expect(try ContentRange.parse(HTTPFields(), declaredLength: 5) == nil)
        var twice = fields
        twice.append("Content-Range", "bytes 5-9/20")
        #expect(throws: AdminFailure.self) { try ContentRange.parse(twice, declaredLength: 5) }
        var huge = HTTPFields()
        huge.append("Content-Range", "bytes 0-9/9999999999999999999999")
        #expect(throws: AdminFailure.self) { try ContentRange.parse(huge, declaredLength: 10) }
    }

    /// Polls `condition` (the server finishes with a cut connection on its own time).
    static func waitFor(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<100 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(Bool(false), "condition not met within 10 s")
    }
}
