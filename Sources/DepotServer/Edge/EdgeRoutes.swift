import DepotCore
import DepotCrypto
import DepotWire
import HTTP
import Server

/// The two routes of the nginx edge cache (scale-out §6), which `depot edge-config nginx` wires up:
///
/// - `GET /v1/edge/authorize` (nginx's `auth_request`, before every pack file it serves, cached or not):
///   the request named by `X-Original-URI`, with its `Authorization` field, gets the checks of the file URL in
///   the spec's order — a malformed path, the token (signature, expiry, pack, revocation, the ledger state's
///   age), then existence in the served manifests — and `204` when it may open the file. No file is read.
///   Otherwise the answer is the file URL's own error answer (which nginx then fetches from the file URL
///   itself, so the client gets Depot's exact status, fields and body); so are the request's conditions that
///   nginx would answer in its own way (`412`, `416`). The range it allows goes into the delivery record only
///   when the request carries the edge secret (the generated configuration sends it): anyone holding a token
///   can ask this route directly, and a purchase must not look delivered for bytes nobody sent.
/// - `GET /v1/edge/origin/{pack}/{version}/files/{path}` (nginx's cache fills, one slice at a time): the
///   file with the file URL's headers, ranges and validators, opened by the edge secret
///   (`X-Depot-Edge-Secret`, compared in constant time) instead of a token. Without `--edge-secret` the route
///   does not exist (`404`); without the right secret it is `403`.
package struct EdgeRoutes: Sendable {
    /// The request field in which the edge sends its secret to the origin route.
    package static let secretField = "X-Depot-Edge-Secret"
    /// The request field in which the edge sends the original request target to the authorize route.
    static let originalURIField = "X-Original-URI"
    /// The authorize answer's field saying the file URL would answer with one range (`206` with `Accept-Ranges`).
    static let acceptRangesField = "X-Depot-Accept-Ranges"

    /// The request field in which the edge sends the original request's method to the authorize route (nginx's
    /// subrequest is a GET whatever the client sent).
    static let originalMethodField = "X-Original-Method"

    let packs: PackRoutes
    /// SHA-256 of `--edge-secret`; nil when none is configured.
    let secretDigest: [UInt8]?
    /// The delivery record's gatherer (nil when `--delivery-record off`).
    let deliveries: DeliveryRecorder?

    init(packs: PackRoutes, secret: String?, deliveries: DeliveryRecorder? = nil) {
        self.packs = packs
        secretDigest = secret.map { SHA256.hash(Array($0.utf8)) }
        self.deliveries = deliveries
    }

    /// Whether `request` carries the edge secret (`X-Depot-Edge-Secret`, once, compared in constant time); false
    /// when no `--edge-secret` is configured.
    func carriesSecret(_ request: RouteRequest) -> Bool {
        guard let secretDigest else { return false }
        let presented = request.head.fields.values(Self.secretField.lowercased())
        return presented.count == 1 && ConstantTime.equals(SHA256.hash(Array(presented[0].utf8)), secretDigest)
    }

    /// `GET /v1/edge/authorize`.
    func authorize(_ request: RouteRequest) throws -> Response {
        let originals = request.head.fields.values(Self.originalURIField.lowercased())
        guard originals.count == 1, let original = originals.first, original.hasPrefix("/") else {
            throw EdgeFailure.missingOriginalURI
        }
        let target = RequestTarget(original)
        let segments: [String]
        do {
            segments = try target.pathSegments()
        } catch {
            throw PackFailure.malformedURL
        }
        guard let parameters = WirePath.packFile.match(segments) else { throw EdgeFailure.notAPackFile }
        let (version, file, purchase): (PackVersion, PackManifest.File, String?)
        do {
            (version, file, purchase) = try packs.authorizeFile(RouteRequest(head: request.head, target: target, parameters: parameters,
                                                                   loop: request.loop))
        } catch let refusal as any AnswerableError {
            // nginx copies a 401's challenge into its answer; the file URL, asked next, sends its own.
            var answer = refusal.answer
            answer.headers.remove("www-authenticate")
            return answer.response(.edgeAuthorize)
        }
        var fields = HTTPFields()
        fields.append("Cache-Control", "no-store")
        // The answers nginx would give differently from the file URL are left to the file URL: a failed
        // precondition (nginx: an HTML 412) and an unsatisfiable range (an HTML 416 with the file's fields).
        let etag = EntityTag(parsing: file.etag) ?? EntityTag(opaqueTag: file.sha256)
        let authorized: [Range<Int64>]
        switch Representation.outcome(of: request.head, conditions: RequestConditions(request.head.fields), etag: etag,
                                      lastModified: version.lastModified, length: file.size) {
        case .preconditionFailed: throw EdgeFailure.answeredByTheFileURL(status: 412)
        case .unsatisfiable: throw EdgeFailure.answeredByTheFileURL(status: 416)
        case .partial(let ranges):
            // nginx drops `Accept-Ranges` from the 206 it makes; the edge adds it back from this field.
            if ranges.count == 1 { fields.append(Self.acceptRangesField, "bytes") }
            authorized = ranges.map { $0.offset..<($0.offset + $0.length) }
        case .full: authorized = [0..<file.size]
        case .notModified: authorized = []
        }
        record(authorized, of: file, in: version, to: purchase, request: request)
        return Response(status: 204, headers: fields, body: .empty, route: RouteLabel.edgeAuthorize.rawValue)
    }

    /// The delivery record of what the edge is allowed to send (spec app-store-server-api §7): the bytes leave
    /// from nginx, cached or not, so the authorized ranges are what Depot knows of them; a `HEAD` sends none.
    /// Only the edge itself (a request with the edge secret) records: a client asking directly sends nothing.
    private func record(_ ranges: [Range<Int64>], of file: PackManifest.File, in version: PackVersion, to purchase: String?,
                        request: RouteRequest) {
        guard let deliveries, let purchase, carriesSecret(request) else { return }
        let methods = request.head.fields.values(Self.originalMethodField.lowercased())
        guard methods.isEmpty || methods == ["GET"] else { return }
        for range in ranges {
            deliveries.record(loop: request.loop, DeliveryRecorder.Piece(
                originalTransactionID: purchase, pack: version.pack, version: version.version, path: file.path, range: range))
        }
    }

    /// `GET /v1/edge/origin/{pack}/{version}/files/{path}`.
    func origin(_ request: RouteRequest) throws -> Reply {
        guard secretDigest != nil else { throw RoutingFailure.notFound }
        guard carriesSecret(request) else { throw EdgeFailure.secretRequired }
        return try packs.originFile(request)
    }
}
