import DepotCore
import DepotCrypto
import DepotWire
import Foundation
import HTTP
import Platform
import Server
import Synchronization

/// The admin API (spec §4.7): streamed uploads into staging and publishing by HTTP, with the same
/// `Publisher` as `depot publish`. Present only when an admin token is configured.
final class AdminService: Sendable {
    let publisher: Publisher
    let store: CatalogStore
    let logger: Logger
    /// The database's publish lock (PostgreSQL ledger), taken around each publish; nil: the file lock only.
    let publishLock: SharedPublishLock?
    private let tokenDigest: [UInt8]
    let publishing = BlockingQueue(label: "depot.admin.publish")
    /// Listings and checks, which only read (a long check does not hold up a publish).
    let inspecting = BlockingQueue(label: "depot.admin.inspect")
    /// Upload checks, upload status look-ups and a publish's checks (`stat`, `readdir`, `statvfs`), off the event
    /// loops and the shared worker pool.
    let lookups = BlockingQueue(label: "depot.admin.lookups")
    /// The catalog reload after a change (it reads the whole catalog and content, and may wait behind the
    /// watcher's reload): on a queue of its own, so that the worker pool's thread is not held meanwhile.
    let reloads = BlockingQueue(label: "depot.admin.reload")
    /// Uploads in flight and publishes under way, per `pack/version`: a publish waits for no upload (it is
    /// refused while one is in flight) and an upload never lands in a version a publish has claimed.
    let activity = Mutex<UploadActivity>(UploadActivity())

    struct UploadActivity {
        var inFlight: [String: Int] = [:]
        var publishing: Set<String> = []
        /// `pack/version/path` of the resumable uploads with a piece in flight (one piece per file at a time).
        var resuming: Set<String> = []
    }
    /// Largest single upload.
    static let uploadLimit: Int64 = 64 << 30
    /// How long a partial upload must have been left untouched before a starting server removes it: longer
    /// than any idle timeout, after which a stalled upload is cut anyway.
    static let abandonedUploadAge: Double = 3_600

    init(adminToken: String, publisher: Publisher, store: CatalogStore, logger: Logger, publishLock: SharedPublishLock? = nil) {
        tokenDigest = SHA256.hash(Array(adminToken.utf8))
        self.publisher = publisher
        self.store = store
        self.logger = logger
        self.publishLock = publishLock
        // Partial files that a crash or a kill left behind. Other instances on a shared content volume may be
        // writing theirs right now: only files untouched for longer than any upload may stall are removed.
        let uploads = publisher.stagingDirectory + "/uploads"
        let cutoff = Date().addingTimeInterval(-Self.abandonedUploadAge).timeIntervalSince1970
        for relative in FileTree.relativeFiles(under: uploads) where (relative as NSString).lastPathComponent.hasPrefix(".partial-") {
            var info = stat()
            guard lstat(uploads + "/" + relative, &info) == 0, Double(info.st_mtim.tv_sec) < cutoff else { continue }
            unlink(uploads + "/" + relative)
        }
    }

    var uploadsDirectory: String { publisher.stagingDirectory + "/uploads" }

    /// Refuses a request under `/admin/` without the admin token, before anything else is looked at (so that
    /// nothing, not even which paths exist, is revealed). Constant time over digests.
    func checkToken(_ head: RequestHead) -> AdminFailure? {
        let values = head.fields.values("authorization")
        guard values.count == 1 else { return .unauthorized }
        let parts = values[0].split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .unauthorized }
        return ConstantTime.equals(SHA256.hash(Array(parts[1].trimmingOWS().utf8)), tokenDigest) ? nil : .unauthorized
    }

    /// Whether `token` is the admin token (constant time over digests).
    func isAdminToken(_ token: String) -> Bool {
        ConstantTime.equals(SHA256.hash(Array(token.utf8)), tokenDigest)
    }

    /// The pack and version of an admin URL, checked.
    static func packVersion(_ request: RouteRequest) throws(AdminFailure) -> (pack: String, version: Int) {
        let pack = request.parameter("pack")
        guard Identifiers.isValidPackID(pack) else { throw .badPackID(pack) }
        guard let version = Identifiers.parseVersion(request.parameter("version")) else { throw .badVersion }
        return (pack, version)
    }

    /// `PUT /admin/v1/packs/{pack}/{version}/files/{path}`: the whole file, or with `Content-Range` one piece of
    /// a resumable upload. The URL and `Content-Range` are checked here; the checks that read the disk (the
    /// version's directory and `current`, free space, path conflicts) run on `lookups`, off the event loop, in
    /// the same order, and the body is read only once they pass.
    func upload(_ request: RouteRequest) throws -> Handling {
        let (pack, version, path) = try Self.uploadTarget(request)
        var declared: Int64?
        if case .contentLength(let n) = request.head.framing { declared = n }
        let range = try ContentRange.parse(request.head.fields, declaredLength: declared)
        let head = request.head
        return .decideLater { [self] in
            await lookups.run { [self] in
                RouteTable.handling(.adminUpload) {
                    if let range { return try resumableUpload(head, pack: pack, version: version, path: path, range: range) }
                    return try upload(head, pack: pack, version: version, path: path)
                }
            }
        }
    }

    /// The pack, version and file path of an upload URL, checked.
    static func uploadTarget(_ request: RouteRequest) throws(AdminFailure) -> (pack: String, version: Int, path: String) {
        let (pack, version) = try packVersion(request)
        let path = request.parameter("path")
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains(where: \.isEmpty) else { throw AdminFailure.malformedFilePath }
        // Names starting with a dot are refused: `.partial-*` and `.resume-*` are the uploads' own scratch names.
        guard Identifiers.isSafeRelativePath(path), path != "manifest.json", !parts.contains(where: { $0.hasPrefix(".") }) else {
            throw AdminFailure.refusedFilePath(path)
        }
        return (pack, version, path)
    }

    /// `POST /admin/v1/packs/{pack}/{version}/publish`.
    func publish(_ request: RouteRequest) throws -> Handling {
        let (pack, version) = try Self.packVersion(request)
        let log = logger.with(requestID: request.requestID)
        return .collectBody(limit: 64 * 1024) { [self] body in
            .later { [self] in
                do {
                    return try await publish(body, pack: pack, version: version, log: log)
                } catch let error as any AnswerableError {
                    return error.answer.response(.adminPublish)
                } catch {
                    return RoutingFailure.unexpected("\(error)").answer.response(.adminPublish)
                }
            }
        }
    }

    /// `POST /admin/v1/packs/{pack}/rollback` with `{"to": N}` (optional): `200` with the publish answer.
    func rollback(_ request: RouteRequest) throws -> Handling {
        let pack = request.parameter("pack")
        guard Identifiers.isValidPackID(pack) else { throw AdminFailure.badPackID(pack) }
        let log = logger.with(requestID: request.requestID)
        return .collectBody(limit: 64 * 1024) { [self] body in
            .later { [self] in
                await answer(.adminRollback, log: log) { publisher throws(PublishError) in
                    try publisher.rollback(pack: pack, to: try Self.rollbackTarget(body))
                }
            }
        }
    }

    /// `POST /admin/v1/packs/{pack}/{version}/promote`: `200` with the publish answer.
    func promote(_ request: RouteRequest) throws -> Handling {
        let (pack, version) = try Self.packVersion(request)
        let log = logger.with(requestID: request.requestID)
        return .reply(.later { [self] in
            await answer(.adminPromote, log: log) { publisher throws(PublishError) in try publisher.promote(pack: pack, version: version) }
        })
    }

    /// `to` of a rollback body: absent, `{}`, or `{"to": N}` with a positive integer.
    static func rollbackTarget(_ body: [UInt8]) throws(PublishError) -> Int? {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw .invalid("The body must be a JSON object: {\"to\": N} or {}.")
        }
        guard let value = object["to"], !(value is NSNull) else { return nil }
        guard let version = JSONScalar.integer(value), version >= 1, let to = Int(exactly: version) else {
            throw .invalid("`to` must be a positive integer version.")
        }
        return to
    }

    /// Runs a rollback or promote on the publishing queue, reloads the catalog and answers `200` with the
    /// publish answer (or the refusal).
    private func answer(_ label: RouteLabel, log: Logger, _ work: @escaping @Sendable (Publisher) throws(PublishError) -> PublishOutcome) async -> Response {
        let result: Result<PublishOutcome, PublishError>
        do {
            result = try await underPublishLock(label == .adminRollback ? "rollback" : "promote", log: log, work)
        } catch {
            return error.answer.response(label)
        }
        switch result {
        case .failure(let error):
            return error.answer.response(label)
        case .success(let outcome):
            await reloadCatalog(log: log)
            log.info(.catalogChanged, "\(label == .adminRollback ? "rolled back" : "promoted") \(outcome.pack): version \(outcome.version) is live")
            return JSONAnswer.response(status: 200, Self.publishAnswer(outcome), label)
        }
    }

    /// Runs `work` on the publishing queue, holding the database's publish lock when the ledger is shared
    /// (scale-out §4); refuses with `publishLockUnavailable` when the lock cannot be taken.
    func underPublishLock<Outcome: Sendable>(_ what: String, log: Logger, _ work: @escaping @Sendable (Publisher) throws(PublishError) -> Outcome)
        async throws(AdminFailure) -> Result<Outcome, PublishError> {
        let (publisher, publishing) = (self.publisher, self.publishing)
        let run: @Sendable () async -> Result<Outcome, PublishError> = {
            await publishing.run {
                do throws(PublishError) { return .success(try work(publisher)) } catch { return .failure(error) }
            }
        }
        guard let publishLock else { return await run() }
        do {
            return try await publishLock.holding(run)
        } catch {
            log.error(.ledgerFailed, "admin \(what) refused: cannot take the publish lock: \(error)")
            throw .publishLockUnavailable
        }
    }

    /// Reloads the catalog after a change, on `reloads`: the change is in the product lists when this returns.
    func reloadCatalog(log: Logger) async {
        let store = self.store
        await reloads.run { _ = store.reload(logger: log) }
    }

    static func publishAnswer(_ outcome: PublishOutcome) -> PublishAnswer {
        PublishAnswer(pack: outcome.pack, version: outcome.version, productId: outcome.productID, files: outcome.files,
                      downloadBytes: outcome.downloadBytes, manifest: WirePath.versionManifest(pack: outcome.pack, version: outcome.version))
    }

    // MARK: - Upload

    /// Checks a whole-file upload (on `lookups`) and makes its sink.
    private func upload(_ head: RequestHead, pack: String, version: Int, path: String) throws -> Handling {
        if let refusal = publisher.versionRefusal(pack: pack, version: version) { throw refusal }
        let expected = try Self.expectedDigest(head.fields)
        // The free-space check comes before a single byte is written (spec §4.7).
        var declared: Int64 = 0
        if case .contentLength(let n) = head.framing { declared = n }
        if declared > Self.uploadLimit { throw AdminFailure.uploadTooLarge(limit: Self.uploadLimit) }
        let free = publisher.space.freeBytes(at: publisher.paths.contentDirectory)
        let reserve = publisher.reserveBytes()
        if free - declared < reserve { throw AdminFailure.insufficientStorage(requiredBytes: declared + reserve, freeBytes: free) }
        let directory = uploadsDirectory + "/\(pack)/\(version)"
        let finalPath = directory + "/" + path
        let partialPath = directory + "/.partial-\(UUID().uuidString)"
        if Self.conflicts(path, in: directory) { throw AdminFailure.pathConflict(path) }
        // The directories and the file are created by the sink on its own queue, not on this event loop.
        let key = "\(pack)/\(version)"
        if activity.withLock({ $0.publishing.contains(key) }) { throw AdminFailure.publishInProgress }
        let sink = UploadSink(partialPath: partialPath, finalPath: finalPath, relativePath: path, expectedSHA256: expected,
                              space: publisher.space, volumePath: publisher.paths.contentDirectory, reserve: reserve,
                              begin: { [self] in beginUpload(key) }, end: { [self] in endUpload(key) })
        return .streamBody(limit: Self.uploadLimit, sink: sink)
    }

    /// Counts an upload into `key` as in flight; false when a publish of that version holds it.
    func beginUpload(_ key: String) -> Bool {
        activity.withLock { state in
            if state.publishing.contains(key) { return false }
            state.inFlight[key, default: 0] += 1
            return true
        }
    }

    func endUpload(_ key: String) {
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

    /// `X-Content-SHA256: <hex>` or `Digest: sha-256=<base64>` (RFC 3230).
    static func expectedDigest(_ fields: HTTPFields) throws(AdminFailure) -> [UInt8]? {
        if let hex = fields.first("x-content-sha256") {
            guard let bytes = Hex.decode(hex.trimmingCharacters(in: .whitespaces)), bytes.count == 32 else {
                throw .badDigestField("X-Content-SHA256 must be 64 hex characters.")
            }
            return bytes
        }
        if let digest = fields.first("digest") {
            for element in digest.split(separator: ",") {
                let parts = element.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingOWS().lowercased() == "sha-256" else { continue }
                guard let data = Data(base64Encoded: String(parts[1].trimmingOWS())), data.count == 32 else {
                    throw .badDigestField("Digest sha-256 must be base64 of 32 bytes.")
                }
                return [UInt8](data)
            }
        }
        return nil
    }

    // MARK: - Publish

    private func publish(_ body: [UInt8], pack: String, version: Int, log: Logger) async throws -> Response {
        let request = try Self.publishRequest(body, pack: pack, version: version)
        let directory = uploadsDirectory + "/\(pack)/\(version)"
        // The version's directory and `current`, and the uploads, are read on `lookups`.
        let refusal: (any Error & Sendable)? = await lookups.run { [publisher] in
            if let refusal = publisher.versionRefusal(pack: pack, version: version) { return refusal }
            return FileStatus.isDirectory(directory) ? nil : AdminFailure.nothingUploaded(pack: pack, version: version)
        }
        if let refusal { throw refusal }
        let key = "\(pack)/\(version)"
        let busy: AdminFailure? = activity.withLock { state in
            if (state.inFlight[key] ?? 0) > 0 { return .uploadsInFlight }
            if state.publishing.contains(key) { return .alreadyPublishing }
            state.publishing.insert(key)
            return nil
        }
        if let busy { throw busy }
        defer { activity.withLock { _ = $0.publishing.remove(key) } }
        let result = try await underPublishLock("publish of \(pack) version \(version)", log: log) { publisher throws(PublishError) in
            try publisher.publishStaged(request, uploadedDirectory: directory)
        }
        let outcome = try result.get()
        await reloadCatalog(log: log)
        log.info(.catalogChanged, "published \(outcome.pack) version \(outcome.version) by the admin API")
        return JSONAnswer.response(status: 201, Self.publishAnswer(outcome), .adminPublish)
    }

    /// The product fields of the publish body (spec §2.1): `id` (or `productId`), `type`, `title`,
    /// `description`, `chunkSize`, and `chunking` (`"content"`, the default, or `"fixed"`) and `stage` (`pack-updates.md`).
    static func publishRequest(_ body: [UInt8], pack: String, version: Int) throws(AdminFailure) -> PublishRequest {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw .badPublishBody("The body must be a JSON object with the product fields.")
        }
        let productID = (object["id"] as? String) ?? (object["productId"] as? String) ?? (object["product"] as? String) ?? ""
        guard let typeText = object["type"] as? String, let type = ProductType(rawValue: typeText) else {
            throw .badPublishBody("`type` must be one of \(ProductType.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        guard let title = object["title"] as? String else { throw .badPublishBody("`title` is required.") }
        var chunkSize: Int64?
        if let value = object["chunkSize"] {
            guard let size = JSONScalar.integer(value), size > 0 else { throw .badPublishBody("`chunkSize` must be a positive integer.") }
            chunkSize = size
        }
        var chunking = ChunkingMethod.content
        if let value = object["chunking"] {
            guard let text = value as? String, let method = ChunkingMethod(rawValue: text) else {
                throw .badPublishBody("`chunking` must be \"content\" or \"fixed\".")
            }
            chunking = method
        }
        var stage = false
        if let value = object["stage"] {
            guard let flag = JSONScalar.boolean(value) else { throw .badPublishBody("`stage` must be true or false.") }
            stage = flag
        }
        return PublishRequest(pack: pack, productID: productID, type: type, title: title, description: object["description"] as? String,
                              version: version, chunking: chunking, chunkSize: chunkSize, stage: stage)
    }
}
