import DepotWire
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import DepotClient

/// An in-process stand-in for the Depot server (spec §4), reached through ``FakeURLProtocol``: product
/// lists with validators, `POST /v1/receipts`, token checks, the manifest's `307`, and pack files with
/// `Range`/`If-Range` semantics (`206` + `Content-Range`, `200` when `If-Range` does not match, `416`).
final class FakeDepot: Sendable {
    typealias ChunkHook = @Sendable (_ ordinal: Int, _ request: RecordedRequest) async -> FakeReply?

    struct State {
        var pack = "level2"
        var live = 1
        var chunkSize: Int64 = 1000
        var versions: [Int: [(path: String, data: Data)]] = [:]
        var acceptedTokens: Set<String> = ["t1"]
        var expiredTokens: Set<String> = []
        var requests: [RecordedRequest] = []
        var chunkRequests = 0
        /// Runs before a chunk request is answered; a non-nil reply replaces the answer.
        var chunkHook: ChunkHook?
        /// This many coming `206` bodies get one byte flipped.
        var corruptChunks = 0
        var offline = false
        /// Raw JSON served as the versioned manifest instead of the generated one.
        var manifestOverride: String?
        /// Answer the unversioned manifest URL like a session that followed the 307 but dropped
        /// `Authorization`: a 401 `token_missing` whose URL is the versioned manifest.
        var dropAuthorizationOnRedirect = false
        var lists: [String: (body: Data, etag: String, lastModified: String)] = [:]
        var listOverride: FakeReply?
        var receiptsReply: FakeReply = .json(200, "{\"entitlements\": [], \"rejected\": []}")
    }

    let host: String
    let baseURL: URL
    let session: URLSession
    let state: Mutex<State>

    init(files: [(String, Data)] = [], chunkSize: Int64 = 1000) {
        host = "depot-\(UUID().uuidString.lowercased()).test"
        baseURL = URL(string: "http://\(host):8080")!
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [FakeURLProtocol.self]
        session = URLSession(configuration: configuration)
        var initial = State()
        initial.chunkSize = chunkSize
        initial.versions[1] = files
        state = Mutex(initial)
        FakeURLProtocol.servers.withLock { $0[host] = self }
    }

    /// Unregisters the server; call at the end of a test.
    func close() {
        FakeURLProtocol.servers.withLock { $0[host] = nil }
        session.invalidateAndCancel()
    }

    func client(cacheDirectory: URL? = nil, cacheFiles: ProductListCache.Files = .system, clock: DepotClock = .system) -> DepotClient {
        DepotClient(baseURL: baseURL, session: session, cacheDirectory: cacheDirectory, cacheFiles: cacheFiles, clock: clock,
                    exchanger: nil)
    }

    // MARK: Test controls

    func update(_ change: (inout State) -> Void) { state.withLock { change(&$0) } }
    var requests: [RecordedRequest] { state.withLock { $0.requests } }
    var chunkRequests: [RecordedRequest] { requests.filter { $0.url.path.contains("/files/") } }

    /// Makes `files` the live version `version` (older versions stay served).
    func publish(version: Int, files: [(String, Data)]) {
        update { $0.versions[version] = files; $0.live = version }
    }

    /// Changes a file of an existing version in place (the server breaking immutability: a new ETag under
    /// the same URL).
    func replaceInPlace(version: Int, path: String, with data: Data) {
        update { state in
            state.versions[version] = state.versions[version]!.map { $0.path == path ? (path, data) : $0 }
        }
    }

    func setList(_ name: String, _ json: String, etag: String, lastModified: String) {
        update { $0.lists[name] = (Data(json.utf8), etag, lastModified) }
    }

    // MARK: Answers

    func respond(to request: RecordedRequest) async -> FakeReply {
        let (offline, isChunk, ordinal, hook) = state.withLock { state -> (Bool, Bool, Int, ChunkHook?) in
            state.requests.append(request)
            let isChunk = request.url.path.contains("/files/")
            if isChunk { state.chunkRequests += 1 }
            return (state.offline, isChunk, state.chunkRequests, state.chunkHook)
        }
        if offline { return .failure(.notConnectedToInternet) }
        if isChunk, let hook, let reply = await hook(ordinal, request) { return reply }
        return state.withLock { route(request, &$0) }
    }

    /// Routes on the same `WirePath` templates the server uses.
    private func route(_ request: RecordedRequest, _ state: inout State) -> FakeReply {
        // Percent-encoded, as it went over the wire: the templates decode each segment once.
        let path = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? request.url.path
        let segments = path.split(separator: "/").map(String.init)
        if segments.count == 1, let list = state.lists[segments[0]] {
            return listReply(request, list, override: state.listOverride)
        }
        if WirePath.receipts.match(path: path) != nil, request.method == "POST" { return state.receiptsReply }
        let live = WirePath.versionManifest(pack: state.pack, version: state.live)
        if let match = WirePath.packManifest.match(path: path), match["pack"] == state.pack {
            let target = baseURL.appendingPathComponent(live)
            if state.dropAuthorizationOnRedirect, request.header("Authorization") != nil {
                return .response(status: 401, headers: ["Content-Type": "application/json"],
                                 body: Data("{\"error\": {\"code\": \"token_missing\", \"message\": \"m\"}}".utf8), url: target)
            }
            if let denied = authorize(request, state) { return denied }
            return .response(status: 307, headers: ["Location": live], body: Data())
        }
        if let match = WirePath.versionManifest.match(path: path), match["pack"] == state.pack {
            if let denied = authorize(request, state) { return denied }
            guard let version = match["version"].flatMap({ Int($0) }), let files = state.versions[version] else { return .error(404, "not_found") }
            if let raw = state.manifestOverride { return .json(200, raw) }
            return .json(200, manifestJSON(version: version, files: files, state: state))
        }
        if let match = WirePath.packFile.match(path: path), match["pack"] == state.pack {
            if let denied = authorize(request, state) { return denied }
            guard let version = match["version"].flatMap({ Int($0) }), let files = state.versions[version],
                  let data = files.first(where: { $0.path == match["path"] })?.data else { return .error(404, "not_found") }
            return fileReply(request, data: data, state: &state)
        }
        return .error(404, "not_found")
    }

    private func authorize(_ request: RecordedRequest, _ state: State) -> FakeReply? {
        guard let field = request.header("Authorization"), field.hasPrefix("Bearer ") else {
            return .error(401, "token_missing")
        }
        let token = String(field.dropFirst(7))
        if state.expiredTokens.contains(token) { return .error(401, "token_expired") }
        if !state.acceptedTokens.contains(token) { return .error(401, "token_invalid") }
        return nil
    }

    private func listReply(_ request: RecordedRequest, _ list: (body: Data, etag: String, lastModified: String),
                           override: FakeReply?) -> FakeReply {
        if let override { return override }
        let validators = ["ETag": list.etag, "Last-Modified": list.lastModified, "Cache-Control": "public, no-cache"]
        if let tags = request.header("If-None-Match") {
            if tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == list.etag }) {
                return .response(status: 304, headers: validators, body: Data())
            }
        } else if request.header("If-Modified-Since") == list.lastModified {
            return .response(status: 304, headers: validators, body: Data())
        }
        var headers = validators
        headers["Content-Type"] = "application/json; charset=utf-8"
        return .response(status: 200, headers: headers, body: list.body)
    }

    private func fileReply(_ request: RecordedRequest, data: Data, state: inout State) -> FakeReply {
        let etag = Self.etag(data)
        let size = Int64(data.count)
        var headers = ["ETag": etag, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"]
        let rangeApplies = request.header("If-Range").map { $0 == etag } ?? true
        guard rangeApplies, let range = request.header("Range"), range.hasPrefix("bytes=") else {
            return .response(status: 200, headers: headers, body: data)
        }
        let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false).map { Int64($0) }
        guard bounds.count == 2, let first = bounds[0], first < size else {
            return .response(status: 416, headers: ["Content-Range": "bytes */\(size)"], body: Data())
        }
        let last = min(bounds[1] ?? size - 1, size - 1)
        var body = data.subdata(in: Int(first)..<Int(last) + 1)
        if state.corruptChunks > 0 {
            state.corruptChunks -= 1
            body[body.startIndex] ^= 0xFF
        }
        headers["Content-Range"] = "bytes \(first)-\(last)/\(size)"
        return .response(status: 206, headers: headers, body: body)
    }

    // MARK: Manifest (spec §4.4 shape)

    static func sha256(_ data: Data) -> String { try! SHA256ChunkHasher().sha256(data).hexString }
    static func etag(_ data: Data) -> String { "\"\(sha256(data))\"" }

    /// The manifest as the server would send it: the wire `PackManifest`, encoded by `WireJSON`.
    private func manifestJSON(version: Int, files: [(path: String, data: Data)], state: State) -> String {
        let entries = files.map { file -> PackManifest.File in
            var chunks: [PackManifest.Chunk] = []
            var offset = 0
            while offset < file.data.count {
                let length = min(Int(state.chunkSize), file.data.count - offset)
                chunks.append(.init(offset: Int64(offset), length: Int64(length), sha256: Self.sha256(file.data.subdata(in: offset..<offset + length))))
                offset += length
            }
            return PackManifest.File(path: file.path, size: Int64(file.data.count), sha256: Self.sha256(file.data), etag: Self.etag(file.data),
                                     url: WirePath.packFile(pack: state.pack, version: version, path: file.path), chunks: chunks)
        }
        let manifest = PackManifest(pack: state.pack, version: version, productId: "com.example.depot.\(state.pack)",
                                    chunkSize: state.chunkSize, published: "2026-11-30T02:33:58Z", files: entries)
        return String(decoding: (try? WireJSON.encode(manifest)) ?? [], as: UTF8.self)
    }
}
