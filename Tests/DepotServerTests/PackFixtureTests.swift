import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// A running Depot over a copy of the sample tree plus a test pack, `testpack`, published with the real
/// `Publisher` (chunk size 4096, a fixed publish time), and the means to sign tokens for it.
final class PackFixture: @unchecked Sendable {
    static let pack = "testpack"
    static let product = "com.example.depot.testpack"
    static let chunkSize: Int64 = 4096
    /// The publish time of version 1 (the files' `Last-Modified`).
    static let publishTime: Int64 = 1_780_000_000
    static let bigFile = "big.bin"
    /// 4 MiB and a bit: a realistic pack file, small enough to stay fast.
    static let bigSize = (4 << 20) + 1234
    static let hugeFile = "huge.bin"
    /// Larger than the server's largest socket send buffer (4 MiB) plus a client's limited receive buffer, so a
    /// download of it is still in progress on the server while the client holds back.
    static let hugeSize = 12 << 20
    /// `[hugeFile: 12 MiB]`, for `extraFiles:`.
    static func hugeFiles() -> [String: [UInt8]] { [hugeFile: bytes(hugeSize, seed: 41)] }

    let depot: TestDepot
    let authority: DownloadTokenAuthority
    /// The manifest of version 1 as written by the publisher.
    let manifest: PackManifest
    /// The bytes of every file of version 1, by manifest path.
    let contents: [String: [UInt8]]

    /// Deterministic pseudo-random bytes (xorshift64*), different for each seed.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            out[i] = UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 56)
        }
        return out
    }

    /// The files of version 1 (paths chosen for the Content-Type table and percent-encoding).
    static func standardFiles(big: Bool) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [
            "range.bin": bytes(1000, seed: 1),
            "empty.bin": [],
            "chunks.bin": bytes(14336, seed: 2),
            "notes.txt": Array("Stage notes: mind the ice.\n".utf8),
            "levels/index.json": Array("{\"stages\": [1, 2, 3]}\n".utf8),
            "art/cover.png": bytes(300, seed: 3),
            "sounds/theme.mp3": bytes(200, seed: 4),
            "name with space+ñ.dat": bytes(50, seed: 5),
            "noext": bytes(10, seed: 6),
        ]
        if big { files[bigFile] = bytes(bigSize, seed: 7) }
        return files
    }

    /// Starts a server with the sample tree and publishes `testpack` version 1 into it; pack files are opened
    /// with `packFileOpener`.
    static func start(big: Bool = false, extraFiles: [String: [UInt8]] = [:], packFileOpener: PackFileOpener = .system,
                      configure: (inout DepotConfiguration) -> Void = { _ in }) async throws -> PackFixture {
        let depot = try await TestDepot.start(packFileOpener: packFileOpener, configure: configure)
        let files = standardFiles(big: big).merging(extraFiles) { $1 }
        let manifest = try publish(files, into: depot, at: publishTime)
        #expect(depot.app.reloadCatalog())
        let secret = try #require(depot.app.configuration.tokenSecret)
        return PackFixture(depot: depot, authority: DownloadTokenAuthority(key: Array(secret.utf8)), manifest: manifest, contents: files)
    }

    /// One server shared by the read-only tests (never stopped; its tree is removed at exit).
    static let shared = Task { () throws -> PackFixture in
        let fixture = try await start()
        SharedTrees.remove(atExit: fixture.depot.tree.path)
        return fixture
    }

    private init(depot: TestDepot, authority: DownloadTokenAuthority, manifest: PackManifest, contents: [String: [UInt8]]) {
        self.depot = depot
        self.authority = authority
        self.manifest = manifest
        self.contents = contents
    }

    /// Publishes `files` as the next version of `pack` with the real publisher; returns the manifest written.
    @discardableResult
    static func publish(_ files: [String: [UInt8]], into depot: TestDepot, pack: String = pack, at time: Int64,
                        chunkSize: Int64 = chunkSize) throws -> PackManifest {
        let source = "source-\(UUID().uuidString.prefix(8))"
        for (path, bytes) in files { depot.tree.write(source + "/" + path, bytes) }
        defer { try? FileManager.default.removeItem(atPath: depot.tree.path + "/" + source) }
        let paths = DepotPaths(catalogDirectory: depot.catalogDirectory, contentDirectory: depot.contentDirectory,
                               dataDirectory: depot.dataDirectory)
        let outcome = try Publisher(paths: paths, now: { time }).publish(PublishRequest(
            pack: pack, productID: pack == Self.pack ? product : "com.example.depot.\(pack)", type: .nonConsumable,
            title: "Test pack", chunking: .fixed, chunkSize: chunkSize, sources: [depot.tree.path + "/" + source]))
        return try manifest(in: depot, pack: pack, version: outcome.version)
    }

    static func manifest(in depot: TestDepot, pack: String, version: Int) throws -> PackManifest {
        let data = try #require(depot.tree.read("content/\(pack)/\(version)/manifest.json"))
        return try PackManifest.decode(data, file: "manifest.json")
    }

    // MARK: - Tokens and requests

    /// A token signed with the server's key.
    func token(pack: String = PackFixture.pack, expires: Int64? = nil, transaction: String = "1000000000000001",
               account: String? = nil) -> String {
        let expiry = expires ?? Int64(Date().timeIntervalSince1970) + 3600
        return authority.issue(DownloadTokenClaims(pack: pack, originalTransactionID: transaction, account: account, expires: expiry))
    }

    enum Credential {
        /// A valid token for `testpack`, as a bearer token.
        case valid
        case none
        case bearer(String)
        /// Appended as `?token=` (or `&token=`).
        case query(String)
    }

    /// `GET` (or `method`) `target` with a credential and extra header fields, on a fresh connection.
    func request(_ target: String, _ headers: [String: String] = [:], credential: Credential = .valid,
                 method: String = "GET") throws -> RawResponse {
        var target = target
        var headers = headers
        switch credential {
        case .valid: headers["Authorization"] = "Bearer " + token()
        case .none: break
        case .bearer(let token): headers["Authorization"] = "Bearer " + token
        case .query(let token): target += (target.contains("?") ? "&" : "?") + "token=" + token
        }
        return try depot.get(target, headers, method: method)
    }

    /// The URL of a file of `testpack` (percent-encoded as in the manifest).
    func fileURL(_ path: String, version: Int = 1) -> String {
        PackManifest.url(pack: PackFixture.pack, version: version, path: path)
    }

    func entry(_ path: String) throws -> PackManifest.File { try #require(manifest.file(path: path)) }

    func stop() async { await depot.stop() }

    /// Runs `body` with a fresh fixture and stops its server afterwards, whether `body` throws or not.
    static func with<T>(big: Bool = false, extraFiles: [String: [UInt8]] = [:],
                        configure: (inout DepotConfiguration) -> Void = { _ in },
                        _ body: (PackFixture) async throws -> T) async throws -> T {
        let fixture = try await start(big: big, extraFiles: extraFiles, configure: configure)
        do {
            let result = try await body(fixture)
            await fixture.stop()
            return result
        } catch {
            await fixture.stop()
            throw error
        }
    }
}

extension TestDepot {
    /// Runs `body` with a fresh server (sample tree unless `sample` is false) and stops it afterwards.
    static func with<T>(sample: Bool = true, _ body: (TestDepot) async throws -> T) async throws -> T {
        let depot = try await start(sample: sample)
        do {
            let result = try await body(depot)
            await depot.stop()
            return result
        } catch {
            await depot.stop()
            throw error
        }
    }
}

extension RawHTTPConnection {
    /// Limits the socket's receive buffer, so the server's writes block as soon as this client stops reading.
    func limitReceiveBuffer(to bytes: Int32) {
        var size = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
}

/// Temporary trees of shared servers, removed when the test process exits.
enum SharedTrees {
    nonisolated(unsafe) static var paths: [String] = []
    static let lock = NSLock()
    static let registered: Void = {
        atexit {
            SharedTrees.lock.lock()
            for path in SharedTrees.paths { try? FileManager.default.removeItem(atPath: path) }
            SharedTrees.lock.unlock()
        }
    }()

    static func remove(atExit path: String) {
        _ = registered
        lock.lock()
        paths.append(path)
        lock.unlock()
    }
}

/// The fixture itself, and spec §2.2: the sample content's manifests match their files.
@Suite struct PackFixtureTests {
    @Test func sampleContentPassesDepotCheck() throws {
        let root = TestDepot.repositoryRoot
        let summary = DepotCheck.run(paths: DepotPaths(catalogDirectory: root + "/catalog", contentDirectory: root + "/content",
                                                       dataDirectory: root + "/var"))
        #expect(summary.problems.isEmpty, "\(summary.problems)")
        #expect(summary.packs >= 2)
        #expect(summary.files >= 4)
    }

    @Test func sampleManifestsAreWhatThePublisherWouldWrite() throws {
        let root = TestDepot.repositoryRoot
        for pack in ["level2", "level3"] {
            let current = try String(contentsOfFile: root + "/content/\(pack)/current", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let directory = root + "/content/\(pack)/\(current)"
            let bytes = try #require(FileManager.default.contents(atPath: directory + "/manifest.json"))
            let manifest = try PackManifest.decode([UInt8](bytes), file: "manifest.json")
            #expect(manifest.consistencyProblems(file: "m", expectedPack: pack, expectedVersion: Int(current)!).isEmpty)
            // Stored byte for byte in the publisher's form.
            #expect(try manifest.encoded() == [UInt8](bytes))
            for file in manifest.files {
                let digest = try FileDigest.compute(path: directory + "/" + file.path, chunkSize: manifest.chunkSize).get()
                #expect(digest.size == file.size)
                #expect(digest.sha256 == file.sha256)
                #expect(digest.chunks == file.chunks)
            }
        }
    }

    @Test func publishedTestPackIsServedAndChecksClean() async throws {
        let fixture = try await PackFixture.shared.value
        #expect(fixture.manifest.files.map(\.path) == fixture.contents.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        let response = try fixture.request(fixture.fileURL("range.bin"))
        #expect(response.status == 200)
        #expect(response.body == fixture.contents["range.bin"])
        let summary = DepotCheck.run(paths: DepotPaths(catalogDirectory: fixture.depot.catalogDirectory,
                                                       contentDirectory: fixture.depot.contentDirectory,
                                                       dataDirectory: fixture.depot.dataDirectory))
        #expect(summary.problems.isEmpty, "\(summary.problems)")
    }
}
