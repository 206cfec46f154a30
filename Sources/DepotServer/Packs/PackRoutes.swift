import DepotCore
package import DepotWire
import DepotCrypto
import HTTP
import Server
import Synchronization

/// `/v1/packs/...` (spec §4.4): manifest redirect, versioned manifest with the download plan, and files.
package struct PackRoutes: Sendable {
    let store: CatalogStore
    let tokens: DownloadTokenAuthority
    let access: any AccessChecker
    /// Seconds since 1970.
    let now: @Sendable () -> Int64
    /// One per event loop.
    let caches: [PackLoopCache]
    /// Whether file answers carry a `DeliveryTag` (the delivery record is on).
    let tagsDeliveries: Bool
    /// Checks and opens a file a loop serves for the first time.
    let opener: PackFileOpener
    /// One per event loop, where its first opens run: serial, so a stalled disk holds one thread per loop
    /// rather than one per request.
    let openQueues: [BlockingQueue]
    /// Runs a job on a loop's own thread: how a file opened off the loop reaches the loop's cache (bound to the
    /// server by `DepotApp`).
    let loopJobs = LoopJobs()

    /// Routes answering from `store`'s snapshot, checking tokens with `tokens` and revocation with `access`, at
    /// the time `now` gives; `loops` file caches; `tagsDeliveries` when the delivery record is on; files opened
    /// with `opener` (a test's holds the open).
    package init(store: CatalogStore, tokens: DownloadTokenAuthority, access: any AccessChecker, now: @escaping @Sendable () -> Int64,
         loops: Int = 1, tagsDeliveries: Bool = false, opener: PackFileOpener = .system) {
        self.store = store
        self.tokens = tokens
        self.access = access
        self.now = now
        self.tagsDeliveries = tagsDeliveries
        self.opener = opener
        caches = (0..<max(1, loops)).map { _ in PackLoopCache() }
        openQueues = (0..<max(1, loops)).map { BlockingQueue(label: "depot.packs.open.\($0)") }
    }

    /// Drops loop `loop`'s open files of an older snapshot at once (called on that loop after a swap), so a
    /// loop without pack traffic does not hold pruned files open.
    func syncCache(loop: Int) {
        caches[loop % caches.count].syncGeneration(store.generation.load(ordering: .acquiring))
    }

    // MARK: - Routes (order of checks, spec §4.4: a malformed path, then the token, then existence)

    /// `GET /v1/packs/{pack}/manifest`: `307` to the live version's manifest, the query (a token, `available`,
    /// `have`) kept.
    func manifestRedirect(_ request: RouteRequest) throws -> Response {
        let packID = try Self.packID(request)
        try authorize(request, pack: packID)
        let pack = try entry(packID)
        guard let live = pack.current, pack.versions[live] != nil else { throw PackFailure.noLiveVersion(pack: packID) }
        var target = live
        var query = request.target.query ?? ""
        if request.target.queryValue("staged") == "true" {
            // `pack-updates.md` §4: the newest version newer than the live one; the rest of the query is kept.
            guard let staged = pack.versions.keys.filter({ $0 > live }).max() else { throw PackFailure.noStagedVersion(pack: packID) }
            target = staged
            query = query.split(separator: "&", omittingEmptySubsequences: false)
                .filter { $0.split(separator: "=", maxSplits: 1).first != "staged" }.joined(separator: "&")
        }
        var location = WirePath.versionManifest(pack: packID, version: target)
        if !query.isEmpty { location += "?" + query }
        var fields = HTTPFields()
        fields.append("Location", location)
        fields.append("Cache-Control", "private, no-cache")
        return Response(status: 307, headers: fields, body: .empty, route: RouteLabel.packManifest.rawValue)
    }

    /// `GET /v1/packs/{pack}/{version}/manifest`, with a plan on `?available=`.
    /// With `?from=old` (`pack-updates.md` §2) the chunks an installed version holds carry `reuse`; that answer is
    /// computed once per pair of versions, off the event loop.
    func manifest(_ request: RouteRequest) throws -> Handling {
        let packID = try Self.packID(request)
        let version = try Self.version(request)
        let from = try request.target.queryValue("from").map { text throws(PackFailure) -> Int in
            guard let parsed = PackManifest.parseFromVersion(text) else { throw .badFromVersion }
            return parsed
        }
        try authorize(request, pack: packID)
        let pack = try entry(packID)
        guard let packVersion = pack.versions[version] else { throw PackFailure.noVersion(pack: packID, version: version) }
        guard let from else {
            return .reply(.response(try Self.manifestResponse(head: request.head, manifest: packVersion.manifest, body: packVersion.manifestBody,
                                                         etag: packVersion.manifestETag, version: packVersion, target: request.target)))
        }
        let old = pack.versions[from]
        let (head, target) = (request.head, request.target)
        return .reply(.later {
            do {
                let delta = try packVersion.delta(from: from, old: old)
                return try Self.manifestResponse(head: head, manifest: delta.manifest, body: delta.body, etag: delta.etag,
                                                 version: packVersion, target: target)
            } catch let error as any AnswerableError {
                return error.answer.response(.packManifest)
            } catch {
                return RoutingFailure.unexpected("\(error)").answer.response(.packManifest)
            }
        })
    }

    /// `GET /v1/packs/{pack}/{version}/files/{path}`.
    func file(_ request: RouteRequest) throws -> Reply {
        let (version, file, cache) = try servableFile(request, checkingToken: true)
        return fileReply(head: request.head, version: version, file: file, cache: cache, loop: request.loop,
                         purchase: deliveredPurchase(cache))
    }

    /// The purchase whose token the loop checked last, to which a file's bytes are delivered, when the delivery
    /// record is on (operator grants are no purchase).
    private func deliveredPurchase(_ cache: PackLoopCache) -> String? {
        guard tagsDeliveries, let claims = cache.lastAuthorized, !claims.originalTransactionID.hasPrefix("grant:") else { return nil }
        return claims.originalTransactionID
    }

    /// The checks `file(_:)` makes, in its order, without opening the file: what the edge asks before it
    /// serves bytes from its cache (`/v1/edge/authorize`). Throws what `file(_:)` would answer instead of the
    /// file; returns the version and the manifest's entry (size, ETag) the conditions of the request apply to,
    /// and the purchase the bytes are delivered to (nil: the delivery record is off, or an operator grant).
    func authorizeFile(_ request: RouteRequest) throws -> (version: PackVersion, file: PackManifest.File, purchase: String?) {
        let (version, file, cache) = try servableFile(request, checkingToken: true)
        return (version, file, deliveredPurchase(cache))
    }

    /// The file for the edge's cache (`/v1/edge/origin/...`, the edge secret already checked): `file(_:)`
    /// without the token.
    func originFile(_ request: RouteRequest) throws -> Reply {
        let (version, file, cache) = try servableFile(request, checkingToken: false)
        return fileReply(head: request.head, version: version, file: file, cache: cache, loop: request.loop, purchase: nil)
    }

    /// A file URL's pack version and manifest entry, after the checks in the spec's order (§4.4: a malformed
    /// path, the token when `checkingToken`, existence), and the loop's cache to open it with.
    private func servableFile(_ request: RouteRequest, checkingToken: Bool) throws -> (PackVersion, PackManifest.File, PackLoopCache) {
        let packID = try Self.packID(request)
        let version = try Self.version(request)
        let path = request.parameter("path")
        guard Identifiers.isSafeRelativePath(path) else { throw PackFailure.malformedURL }
        let cache = checkingToken ? try authorize(request, pack: packID, needsCurrentState: true) : syncedCache(request)
        guard let packVersion = try entry(packID).versions[version] else { throw PackFailure.noVersion(pack: packID, version: version) }
        guard let file = packVersion.files[path] else { throw PackFailure.noFile(pack: packID, version: version, path: path) }
        return (packVersion, file, cache)
    }

    /// Anything else under `/v1/packs/`: `400` when it does not even start with a pack ID, else `404`.
    func unmatched(_ request: RouteRequest) throws -> Response {
        let first = request.parameter("rest").split(separator: "/", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard Identifiers.isValidPackID(first) else { throw PackFailure.malformedURL }
        throw RoutingFailure.notFound
    }

    private static func packID(_ request: RouteRequest) throws(PackFailure) -> String {
        let pack = request.parameter("pack")
        guard Identifiers.isValidPackID(pack) else { throw .malformedURL }
        return pack
    }

    private static func version(_ request: RouteRequest) throws(PackFailure) -> Int {
        guard let version = Identifiers.parseVersion(request.parameter("version")) else { throw .malformedURL }
        return version
    }

    private func entry(_ packID: String) throws(PackFailure) -> PackEntry {
        guard let snapshot = store.current, let pack = snapshot.content.packs[packID] else { throw .noPack(packID) }
        return pack
    }

    /// The loop's cache, synced with the store.
    private func syncedCache(_ request: RouteRequest) -> PackLoopCache {
        let cache = caches[request.loop % caches.count]
        cache.syncGeneration(store.generation.load(ordering: .acquiring))
        return cache
    }

    /// The token check of `request` for `pack`, on the loop's cache (synced with the store first). With
    /// `needsCurrentState` (pack files), a valid token for the pack is refused while the ledger state that
    /// would say whether it was revoked is older than `--ledger-stale-max` (scale-out §3).
    @discardableResult
    private func authorize(_ request: RouteRequest, pack: String, needsCurrentState: Bool = false) throws(TokenRejection) -> PackLoopCache {
        let cache = syncedCache(request)
        if case .failure(let rejection) = authorize(head: request.head, target: request.target, pack: pack, cache: cache,
                                                    needsCurrentState: needsCurrentState) {
            throw rejection
        }
        return cache
    }

    /// Checks the token: `Authorization: Bearer` first, else `?token=`. An Authorization field of another scheme
    /// (Basic credentials added by a proxy or a download manager) carries no download token and does not hide
    /// one in the query (spec §4.3: the token is accepted as a bearer token *or* in the query).
    private func authorize(head: RequestHead, target: RequestTarget, pack: String, cache: PackLoopCache,
                           needsCurrentState: Bool) -> Result<Void, TokenRejection> {
        var token: String?
        let bearers = head.fields.values("authorization").filter {
            $0.split(separator: " ", maxSplits: 1).first?.lowercased() == "bearer"
        }
        if bearers.count > 1 { return .failure(.invalid) }
        if let value = bearers.first {
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, !parts[1].trimmingOWS().isEmpty else { return .failure(.invalid) }
            token = String(parts[1].trimmingOWS())
        } else if let query = target.queryValue("token") {
            token = query
        }
        guard let token, !token.isEmpty else { return .failure(.missing) }
        let claims: DownloadTokenClaims
        let time = now()
        if let known = cache.claims(for: token) {
            // The signature was checked on an earlier request of this loop; the expiry is checked again.
            guard known.expires > time else { return .failure(.expired) }
            claims = known
        } else {
            switch tokens.verify(token, now: time) {
            case .failure(let rejection): return .failure(rejection)
            case .success(let verified):
                claims = verified
                cache.remember(verified, for: token)
            }
        }
        guard claims.pack == pack else { return .failure(.wrongPack) }
        // A state older than `--ledger-stale-max` answers for no purchase, revoked or not.
        if needsCurrentState && !access.isCurrent { return .failure(.ledgerStale) }
        // Revocation is looked up on every request: a refund takes effect on the very next one.
        guard access.isAllowed(originalTransactionID: claims.originalTransactionID, account: claims.account) else {
            return .failure(.revoked)
        }
        cache.lastAuthorized = claims
        return .success(())
    }

    private static func manifestResponse(head: RequestHead, manifest: PackManifest, body storedBody: [UInt8], etag storedTag: EntityTag,
                                         version: PackVersion, target: RequestTarget) throws -> Response {
        var body = storedBody
        var etag = storedTag
        if let available = target.queryValue("available") {
            let plan = try ChunkPlan.make(manifest: manifest, available: available, have: target.queryValue("have"))
            body = try Self.adding(plan, to: body)
            etag = ProductList.entityTag(for: body)
        }
        let representation = Representation(
            source: .bytes(body), etag: etag, lastModified: version.lastModified,
            contentType: "application/json; charset=utf-8", cacheControl: "private, no-cache", route: RouteLabel.packManifest.rawValue)
        return representation.respond(to: head, conditions: RequestConditions(head.fields))
    }

    /// The stored manifest with `"plan"` added as its last member, encoded by ``WireJSON``: the bytes of the
    /// manifest-with-plan that `PackManifest.plan` describes, without encoding every file and chunk again on
    /// the event loop (a large pack's manifest is megabytes).
    package static func adding(_ plan: ChunkPlan, to manifest: [UInt8]) throws -> [UInt8] {
        guard let close = manifest.lastIndex(of: UInt8(ascii: "}")) else { return manifest }
        var out = Array(manifest[..<close])
        out.append(contentsOf: Array(",\n \"plan\": ".utf8))
        try WireJSON.append(plan, to: &out)
        out.append(contentsOf: Array("}\n".utf8))
        return out
    }

    /// A file's answer: at once when the loop has the file open (the hot path: every chunk request of a download
    /// after its first), else `.later`, with the path-safety check and the open (``PackFileOpener``) on the loop's
    /// open queue, off the event loop. The descriptor is then reused (versions are immutable): a job on the loop
    /// remembers it before the answer is sent (both go through the loop's job queue), so the next request for the
    /// file on this loop finds it open. `purchase`: the delivery record's, when it is on.
    private func fileReply(head: RequestHead, version: PackVersion, file: PackManifest.File, cache: PackLoopCache, loop: Int,
                           purchase: String?) -> Reply {
        let key = PackLoopCache.FileKey(version: ObjectIdentifier(version), path: file.path)
        if let known = cache.file(key) {
            return .response(Self.fileResponse(head: head, version: version, file: file, served: known, purchase: purchase))
        }
        let (generation, opener, queue, loopJobs) = (cache.generation, self.opener, openQueues[loop % openQueues.count], self.loopJobs)
        return .later {
            switch await queue.run({ opener.open(version.directory, file.path, file.size) }) {
            case .failure(let failure):
                return failure.answer.response(.packFile)
            case .success(let opened):
                let served = PackLoopCache.ServedFile(file: opened, etag: EntityTag(parsing: file.etag) ?? EntityTag(opaqueTag: file.sha256),
                                                      contentType: MediaType.forPath(file.path))
                loopJobs.run(on: loop) { cache.remember(served, for: key, lookedUpIn: generation) }
                return Self.fileResponse(head: head, version: version, file: file, served: served, purchase: purchase)
            }
        }
    }

    /// The answer from an open file, tagged with the delivery to `purchase` (when there is one).
    private static func fileResponse(head: RequestHead, version: PackVersion, file: PackManifest.File, served: PackLoopCache.ServedFile,
                                     purchase: String?) -> Response {
        let representation = Representation(
            source: .file(served.file), etag: served.etag, lastModified: version.lastModified,
            contentType: served.contentType, cacheControl: "private, max-age=31536000, immutable", route: RouteLabel.packFile.rawValue,
            lastModifiedText: version.lastModifiedText)
        var response = representation.respond(to: head, conditions: RequestConditions(head.fields))
        if let purchase {
            response.tag = DeliveryTag(purchase: purchase, pack: version.pack, version: version.version,
                                       path: file.path, body: response.body)
        }
        return response
    }
}

/// `Content-Type` by file extension.
enum MediaType {
    static func forPath(_ path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "application/octet-stream" }
        switch path[path.index(after: dot)...].lowercased() {
        case "json": return "application/json"
        case "txt": return "text/plain; charset=utf-8"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "mp3": return "audio/mpeg"
        case "m4a": return "audio/mp4"
        case "wav": return "audio/wav"
        case "caf": return "audio/x-caf"
        case "mp4": return "video/mp4"
        case "zip": return "application/zip"
        case "plist": return "application/x-plist"
        default: return "application/octet-stream"
        }
    }
}
