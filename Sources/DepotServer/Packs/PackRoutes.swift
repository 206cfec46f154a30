import DepotCore
import DepotCrypto
import Glibc
import HTTP
import Server
import Synchronization

/// `/v1/packs/...` (spec §4.4): manifest redirect, versioned manifest with the download plan, and files.
struct PackRoutes: Sendable {
    let store: CatalogStore
    let tokens: DownloadTokenAuthority
    let access: any AccessChecker
    /// Seconds since 1970.
    let now: @Sendable () -> Int64
    /// One per event loop.
    let caches: [PackLoopCache]

    init(store: CatalogStore, tokens: DownloadTokenAuthority, access: any AccessChecker, now: @escaping @Sendable () -> Int64,
         loops: Int = 1) {
        self.store = store
        self.tokens = tokens
        self.access = access
        self.now = now
        caches = (0..<max(1, loops)).map { _ in PackLoopCache() }
    }

    private enum Target {
        case manifestRedirect(pack: String)
        case manifest(pack: String, version: Int)
        case file(pack: String, version: Int, path: String)
    }

    /// Drops loop `loop`'s open files of an older snapshot at once (called on that loop after a swap), so a
    /// loop without pack traffic does not hold pruned files open.
    func syncCache(loop: Int) {
        caches[loop % caches.count].syncGeneration(store.generation.load(ordering: .acquiring))
    }

    /// `segments` are the decoded path segments after `/v1/packs`.
    func respond(to head: RequestHead, segments: ArraySlice<String>, target: RequestTarget, loop: Int = 0) -> Response {
        let cache = caches[loop % caches.count]
        cache.syncGeneration(store.generation.load(ordering: .acquiring))
        let parsed: Target
        switch Self.parse(segments) {
        case .success(let t): parsed = t
        case .failure(let error): return error.response(route: "packs")
        }
        let packID: String
        let route: String
        switch parsed {
        case .manifestRedirect(let p): packID = p; route = "pack_manifest"
        case .manifest(let p, _): packID = p; route = "pack_manifest"
        case .file(let p, _, _): packID = p; route = "pack_file"
        }
        // Token before existence (spec §4.4).
        if case .failure(let rejection) = authorize(head: head, target: target, pack: packID, cache: cache) {
            return rejection.apiError.response(route: route)
        }
        guard let snapshot = store.current, let pack = snapshot.content.packs[packID] else {
            return APIError.notFound("No pack \"\(packID)\".").response(route: route)
        }
        switch parsed {
        case .manifestRedirect:
            guard let live = pack.current, pack.versions[live] != nil else {
                return APIError.notFound("Pack \"\(packID)\" has no live version.").response(route: route)
            }
            var location = "/v1/packs/\(packID)/\(live)/manifest"
            // The query (a token, `available`, `have`) travels with the redirect.
            if let query = target.query, !query.isEmpty { location += "?" + query }
            var fields = HTTPFields()
            fields.append("Location", location)
            fields.append("Cache-Control", "private, no-cache")
            return Response(status: 307, headers: fields, body: .empty, route: route)
        case .manifest(_, let version):
            guard let packVersion = pack.versions[version] else {
                return APIError.notFound("Pack \"\(packID)\" has no version \(version).").response(route: route)
            }
            return manifestResponse(head: head, version: packVersion, target: target)
        case .file(_, let version, let path):
            guard let packVersion = pack.versions[version] else {
                return APIError.notFound("Pack \"\(packID)\" has no version \(version).").response(route: route)
            }
            guard let file = packVersion.files[path] else {
                return APIError.notFound("Version \(version) of pack \"\(packID)\" has no file \"\(path)\".").response(route: route)
            }
            return fileResponse(head: head, version: packVersion, file: file, cache: cache)
        }
    }

    private static func parse(_ segments: ArraySlice<String>) -> Result<Target, APIError> {
        let malformed = APIError(400, "bad_request", "Malformed pack URL.")
        guard let packID = segments.first else { return .failure(APIError.notFound()) }
        guard Identifiers.isValidPackID(packID) else { return .failure(malformed) }
        let rest = segments.dropFirst()
        if rest.count == 1, rest.first == "manifest" { return .success(.manifestRedirect(pack: packID)) }
        guard rest.count >= 2, let versionText = rest.first else { return .failure(APIError.notFound()) }
        let kind = rest[rest.startIndex + 1]
        guard kind == "manifest" || kind == "files" else { return .failure(APIError.notFound()) }
        guard let version = Identifiers.parseVersion(versionText) else { return .failure(malformed) }
        if kind == "manifest" {
            return rest.count == 2 ? .success(.manifest(pack: packID, version: version)) : .failure(APIError.notFound())
        }
        let pathSegments = rest.dropFirst(2)
        guard !pathSegments.isEmpty, !pathSegments.contains(where: \.isEmpty) else { return .failure(malformed) }
        let path = pathSegments.joined(separator: "/")
        guard PathEncoding.isSafeRelativePath(path) else { return .failure(malformed) }
        return .success(.file(pack: packID, version: version, path: path))
    }

    /// Checks the token: `Authorization: Bearer` first, else `?token=`. An Authorization field of another scheme
    /// (Basic credentials added by a proxy or a download manager) carries no download token and does not hide
    /// one in the query (spec §4.3: the token is accepted as a bearer token *or* in the query).
    private func authorize(head: RequestHead, target: RequestTarget, pack: String, cache: PackLoopCache) -> Result<Void, TokenRejection> {
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
        // Revocation is looked up on every request: a refund takes effect on the very next one.
        guard access.isAllowed(originalTransactionID: claims.originalTransactionID, account: claims.account) else {
            return .failure(.revoked)
        }
        return .success(())
    }

    private func manifestResponse(head: RequestHead, version: PackVersion, target: RequestTarget) -> Response {
        var body = version.manifestBody
        var etag = version.manifestETag
        if let available = target.queryValue("available") {
            let plan: ChunkPlan
            do {
                plan = try ChunkPlan.make(manifest: version.manifest, available: available, have: target.queryValue("have"))
            } catch {
                let message = error == .badAvailable
                    ? "`available` must be a non-negative integer (bytes free on the device)."
                    : "`have` must be a non-negative integer on a chunk boundary, at most downloadBytes."
                return APIError(400, "bad_request", message).response(route: "pack_manifest")
            }
            body = Self.insertPlan(plan, into: body)
            etag = ProductList.entityTag(for: body)
        }
        let representation = Representation(
            source: .bytes(body), etag: etag, lastModified: version.lastModified,
            contentType: "application/json; charset=utf-8", cacheControl: "private, no-cache", route: "pack_manifest")
        return representation.respond(to: head, conditions: RequestConditions(head.fields))
    }

    /// Adds `"plan": {...}` as the last member of the manifest object.
    static func insertPlan(_ plan: ChunkPlan, into manifest: [UInt8]) -> [UInt8] {
        guard let close = manifest.lastIndex(of: UInt8(ascii: "}")) else { return manifest }
        var out = Array(manifest[..<close])
        out.append(contentsOf: Array(",\n \"plan\": \(plan.encoded())}\n".utf8))
        return out
    }

    private func fileResponse(head: RequestHead, version: PackVersion, file: PackManifest.File, cache: PackLoopCache) -> Response {
        let key = PackLoopCache.FileKey(version: ObjectIdentifier(version), path: file.path)
        let served: PackLoopCache.ServedFile
        if let known = cache.file(key) {
            served = known
        } else {
            // Path safety (spec §4.4) when the file is first opened: no component may be a symlink, and the file
            // opened must be the one checked (a directory swapped for a symlink between the check and the open is
            // caught by the identity comparison). The descriptor is then reused: versions are immutable.
            guard let checked = FileStatus.containedRegularFile(base: version.directory, relative: file.path) else {
                return APIError.notFound("The file is missing on this server.").response(route: "pack_file")
            }
            guard let opened = OpenFile.open(path: version.directory + "/" + file.path) else {
                let code = errno
                if code == EMFILE || code == ENFILE {
                    var busy = APIError(503, "unavailable", "The server cannot open more files right now; try again.")
                    busy.headers.append("Retry-After", "1")
                    return busy.response(route: "pack_file")
                }
                return APIError.notFound("The file is missing on this server.").response(route: "pack_file")
            }
            guard FileStatus.identity(descriptor: opened.descriptor) == checked else {
                return APIError.notFound("The file is missing on this server.").response(route: "pack_file")
            }
            guard opened.size == file.size else {
                return APIError(500, "content_corrupt", "The file on disk does not match its manifest.").response(route: "pack_file")
            }
            served = PackLoopCache.ServedFile(file: opened, etag: EntityTag(parsing: file.etag) ?? EntityTag(opaqueTag: file.sha256),
                                              contentType: MediaType.forPath(file.path))
            cache.remember(served, for: key)
        }
        let representation = Representation(
            source: .file(served.file), etag: served.etag, lastModified: version.lastModified,
            contentType: served.contentType, cacheControl: "private, max-age=31536000, immutable", route: "pack_file",
            lastModifiedText: version.lastModifiedText)
        return representation.respond(to: head, conditions: RequestConditions(head.fields))
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
