import DepotCore
import DepotCrypto
import Foundation
import HTTP
import Platform
import Server
import Synchronization

/// The admin API (spec §4.7): streamed uploads into staging and publishing by HTTP, with the same
/// `Publisher` as `depot publish`. Present only when an admin token is configured.
final class AdminService: AdminRoutes {
    let publisher: Publisher
    let store: CatalogStore
    let logger: Logger
    private let tokenDigest: [UInt8]
    private let publishing = BlockingQueue(label: "depot.admin.publish")
    /// Uploads in flight and publishes under way, per `pack/version`: a publish waits for no upload (it is
    /// refused while one is in flight) and an upload never lands in a version a publish has claimed.
    private let activity = Mutex<UploadActivity>(UploadActivity())

    struct UploadActivity {
        var inFlight: [String: Int] = [:]
        var publishing: Set<String> = []
    }
    /// Largest single upload.
    static let uploadLimit: Int64 = 64 << 30

    init(adminToken: String, publisher: Publisher, store: CatalogStore, logger: Logger) {
        tokenDigest = SHA256.hash(Array(adminToken.utf8))
        self.publisher = publisher
        self.store = store
        self.logger = logger
        // Partial files that a crash or a kill left behind: no upload is in flight before the server runs.
        let uploads = publisher.stagingDirectory + "/uploads"
        for relative in FileTree.relativeFiles(under: uploads) where (relative as NSString).lastPathComponent.hasPrefix(".partial-") {
            unlink(uploads + "/" + relative)
        }
    }

    var uploadsDirectory: String { publisher.stagingDirectory + "/uploads" }

    func handle(_ head: RequestHead, segments: [String], target: RequestTarget) -> Handling {
        // Authentication first: without the token nothing else is revealed. Constant time over digests.
        guard authorized(head) else {
            var error = APIError(401, "unauthorized", "A valid admin token is required (Authorization: Bearer).")
            error.headers.append("WWW-Authenticate", "Bearer")
            return reply(error)
        }
        // /admin/v1/packs/{pack}/{version}/files/{path...} and /admin/v1/packs/{pack}/{version}/publish
        guard segments.count >= 6, segments[1] == "v1", segments[2] == "packs" else { return reply(.notFound()) }
        let pack = segments[3]
        guard Identifiers.isValidPackID(pack) else { return reply(APIError(400, "bad_request", "\"\(pack)\" is not a pack ID.")) }
        guard let version = Identifiers.parseVersion(segments[4]) else {
            return reply(APIError(400, "bad_request", "The version must be a positive integer."))
        }
        switch segments[5] {
        case "files" where segments.count >= 7:
            guard head.method == .put else { return reply(.methodNotAllowed("PUT")) }
            let parts = segments[6...]
            guard !parts.contains(where: \.isEmpty) else { return reply(APIError(400, "bad_request", "Malformed file path.")) }
            let path = parts.joined(separator: "/")
            // Names starting with a dot are refused: `.partial-*` is the upload's own scratch name.
            guard PathEncoding.isSafeRelativePath(path), path != "manifest.json", !parts.contains(where: { $0.hasPrefix(".") }) else {
                return reply(APIError(400, "bad_request", "\"\(path)\" cannot be a pack file path."))
            }
            return upload(head, pack: pack, version: version, path: path)
        case "publish" where segments.count == 6:
            guard head.method == .post else { return reply(.methodNotAllowed("POST")) }
            return .collectBody(limit: 64 * 1024) { [self] body in
                .later { [self] in await publish(body, pack: pack, version: version) }
            }
        default:
            return reply(.notFound())
        }
    }

    private func authorized(_ head: RequestHead) -> Bool {
        let values = head.fields.values("authorization")
        guard values.count == 1 else { return false }
        let parts = values[0].split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return ConstantTime.equals(SHA256.hash(Array(parts[1].trimmingOWS().utf8)), tokenDigest)
    }

    private func reply(_ error: APIError) -> Handling {
        .reply(.response(error.response(route: "admin")))
    }

    // MARK: - Upload

    private func upload(_ head: RequestHead, pack: String, version: Int, path: String) -> Handling {
        if let refusal = publisher.versionRefusal(pack: pack, version: version) { return reply(Self.apiError(for: refusal)) }
        var expected: [UInt8]?
        do {
            expected = try Self.expectedDigest(head.fields)
        } catch {
            return reply(error)
        }
        // The free-space check comes before a single byte is written (spec §4.7).
        var declared: Int64 = 0
        if case .contentLength(let n) = head.framing { declared = n }
        if declared > Self.uploadLimit {
            return reply(APIError(413, "too_large", "An upload may be at most \(Self.uploadLimit) bytes."))
        }
        let free = publisher.space.freeBytes(at: publisher.paths.contentDirectory)
        let reserve = publisher.reserveBytes()
        if free - declared < reserve {
            return reply(UploadSink.insufficient(required: declared + reserve, free: free))
        }
        let directory = uploadsDirectory + "/\(pack)/\(version)"
        let finalPath = directory + "/" + path
        let partialPath = directory + "/.partial-\(UUID().uuidString)"
        if Self.conflicts(path, in: directory) { return reply(Self.pathConflict(path)) }
        // The directories and the file are created by the sink on its own queue, not on this event loop.
        let key = "\(pack)/\(version)"
        if activity.withLock({ $0.publishing.contains(key) }) {
            return reply(APIError(409, "conflict", "A publish of this version is in progress; upload again once it has finished."))
        }
        let sink = UploadSink(partialPath: partialPath, finalPath: finalPath, relativePath: path, expectedSHA256: expected,
                              space: publisher.space, volumePath: publisher.paths.contentDirectory, reserve: reserve,
                              begin: { [self] in beginUpload(key) }, end: { [self] in endUpload(key) })
        return .streamBody(limit: Self.uploadLimit, sink: sink)
    }

    /// Counts an upload into `key` as in flight; false when a publish of that version holds it.
    private func beginUpload(_ key: String) -> Bool {
        activity.withLock { state in
            if state.publishing.contains(key) { return false }
            state.inFlight[key, default: 0] += 1
            return true
        }
    }

    private func endUpload(_ key: String) {
        activity.withLock { state in
            let left = (state.inFlight[key] ?? 1) - 1
            state.inFlight[key] = left > 0 ? left : nil
        }
    }

    /// True when `path` cannot be stored under `directory` because a directory sits where the file goes, or
    /// a file sits where one of its parent directories goes.
    static func conflicts(_ path: String, in directory: String) -> Bool {
        if FileStatus.isDirectory(directory + "/" + path) { return true }
        var prefix = directory
        for component in path.split(separator: "/").dropLast() {
            prefix += "/" + component
            var info = stat()
            if lstat(prefix, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR { return true }
        }
        return false
    }

    static func pathConflict(_ path: String) -> APIError {
        APIError(409, "conflict", "\"\(path)\" clashes with another file of this upload (a file cannot also be a directory).")
    }

    /// `X-Content-SHA256: <hex>` or `Digest: sha-256=<base64>` (RFC 3230).
    static func expectedDigest(_ fields: HTTPFields) throws(APIError) -> [UInt8]? {
        if let hex = fields.first("x-content-sha256") {
            guard let bytes = Hex.decode(hex.trimmingCharacters(in: .whitespaces)), bytes.count == 32 else {
                throw APIError(400, "bad_request", "X-Content-SHA256 must be 64 hex characters.")
            }
            return bytes
        }
        if let digest = fields.first("digest") {
            for element in digest.split(separator: ",") {
                let parts = element.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingOWS().lowercased() == "sha-256" else { continue }
                guard let data = Data(base64Encoded: String(parts[1].trimmingOWS())), data.count == 32 else {
                    throw APIError(400, "bad_request", "Digest sha-256 must be base64 of 32 bytes.")
                }
                return [UInt8](data)
            }
        }
        return nil
    }

    // MARK: - Publish

    private func publish(_ body: [UInt8], pack: String, version: Int) async -> Response {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return APIError(400, "bad_request", "The body must be a JSON object with the product fields.").response(route: "admin_publish")
        }
        let productID = (object["id"] as? String) ?? (object["productId"] as? String) ?? (object["product"] as? String) ?? ""
        guard let typeText = object["type"] as? String, let type = ProductType(rawValue: typeText) else {
            return APIError(400, "bad_request", "`type` must be one of \(ProductType.allCases.map(\.rawValue).joined(separator: ", ")).")
                .response(route: "admin_publish")
        }
        guard let title = object["title"] as? String else {
            return APIError(400, "bad_request", "`title` is required.").response(route: "admin_publish")
        }
        var chunkSize = PackManifest.defaultChunkSize
        if let value = object["chunkSize"] {
            guard let number = value as? NSNumber, number.int64Value > 0 else {
                return APIError(400, "bad_request", "`chunkSize` must be a positive integer.").response(route: "admin_publish")
            }
            chunkSize = number.int64Value
        }
        let request = PublishRequest(pack: pack, productID: productID, type: type, title: title,
                                     description: object["description"] as? String, version: version, chunkSize: chunkSize)
        if let refusal = publisher.versionRefusal(pack: pack, version: version) {
            return Self.apiError(for: refusal).response(route: "admin_publish")
        }
        let directory = uploadsDirectory + "/\(pack)/\(version)"
        guard FileStatus.isDirectory(directory) else {
            return APIError(404, "not_found", "Nothing was uploaded for pack \(pack) version \(version).").response(route: "admin_publish")
        }
        let key = "\(pack)/\(version)"
        let busy: String? = activity.withLock { state in
            if (state.inFlight[key] ?? 0) > 0 { return "Uploads into this version are still in progress; publish once they have finished." }
            if state.publishing.contains(key) { return "This version is being published already." }
            state.publishing.insert(key)
            return nil
        }
        if let busy { return APIError(409, "conflict", busy).response(route: "admin_publish") }
        defer { activity.withLock { _ = $0.publishing.remove(key) } }
        let publisher = self.publisher
        let result: Result<PublishOutcome, PublishError> = await publishing.run {
            do throws(PublishError) { return .success(try publisher.publishStaged(request, uploadedDirectory: directory)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let outcome):
            store.reload()
            logger.info("published \(outcome.pack) version \(outcome.version) by the admin API")
            let body = "{\"pack\": \(JSONText.string(outcome.pack)), \"version\": \(outcome.version), \"productId\": \(JSONText.string(outcome.productID)), "
                + "\"files\": \(outcome.files), \"downloadBytes\": \(outcome.downloadBytes), "
                + "\"manifest\": \(JSONText.string("/v1/packs/\(outcome.pack)/\(outcome.version)/manifest"))}\n"
            return JSONResponse.make(status: 201, body, route: "admin_publish")
        case .failure(let error):
            return Self.apiError(for: error).response(route: "admin_publish")
        }
    }

    static func apiError(for error: PublishError) -> APIError {
        switch error {
        case .invalid(let why): APIError(400, "bad_request", why)
        case .versionExists: APIError(409, "version_exists", error.description)
        case .productConflict(let why): APIError(409, "conflict", why)
        case .insufficientSpace(let required, let free): UploadSink.insufficient(required: required, free: free)
        case .catalogInvalid(let why): APIError(409, "catalog_invalid", "The catalog on disk is not valid; fix it first: \(why)")
        case .io(let why): APIError(500, "storage_error", why)
        }
    }
}
