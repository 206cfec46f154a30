import DepotCore
import DepotCrypto
import HTTP
import Server

/// One product list (v1 or v2) with both variants and every response that does not depend on the request
/// precomputed, so the common requests cost a lookup and a copy.
struct ProductList: Sendable {
    struct Variant: Sendable {
        let body: [UInt8]
        let etag: EntityTag
        let ok: Response
        let notModified: Response
    }

    let name: String
    let identity: Variant
    let gzip: Variant
    let lastModified: Int64
    let cacheControl: String

    /// - Parameters:
    ///   - body: the identity bytes.
    ///   - lastModified: when these bytes last changed.
    init(name: String, body: [UInt8], lastModified: Int64, cacheControl: String) throws {
        self.name = name
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        let compressed = try Gzip.compress(body)
        identity = Self.variant(name: name, body: body, gzip: false, lastModified: lastModified, cacheControl: cacheControl)
        gzip = Self.variant(name: name, body: compressed, gzip: true, lastModified: lastModified, cacheControl: cacheControl)
    }

    /// A strong entity tag from the bytes themselves (the same on every replica serving the same bytes).
    static func entityTag(for bytes: [UInt8]) -> EntityTag {
        EntityTag(opaqueTag: Hex.encode(SHA256.hash(bytes).prefix(16)))
    }

    private static func variant(name: String, body: [UInt8], gzip: Bool, lastModified: Int64, cacheControl: String) -> Variant {
        let representation = representation(body: body, gzip: gzip, lastModified: lastModified, cacheControl: cacheControl)
        var ok = representation.fullResponse()
        ok.freeze()
        var notModified = representation.notModifiedResponse()
        notModified.freeze()
        return Variant(body: body, etag: representation.etag, ok: ok, notModified: notModified)
    }

    private static func representation(body: [UInt8], gzip: Bool, lastModified: Int64, cacheControl: String) -> Representation {
        var contentFields = HTTPFields()
        if gzip { contentFields.append("Content-Encoding", "gzip") }
        return Representation(source: .bytes(body), etag: entityTag(for: body), lastModified: lastModified,
                              contentType: "application/json; charset=utf-8", cacheControl: cacheControl,
                              contentFields: contentFields, varies: true, route: "products")
    }

    /// Answers a GET or HEAD of this list.
    func respond(to head: RequestHead) -> Response {
        let useGzip = AcceptEncoding.acceptsGzip(head.fields)
        let variant = useGzip ? gzip : identity
        let conditions = RequestConditions(head.fields)
        if conditions.isEmpty { return variant.ok }
        switch conditions.preconditions.evaluate(isGetOrHead: true, etag: variant.etag, lastModified: lastModified) {
        case .notModified:
            return variant.notModified
        case .proceed where conditions.range.isEmpty:
            return variant.ok
        default:
            return Self.representation(body: variant.body, gzip: useGzip, lastModified: lastModified, cacheControl: cacheControl)
                .respond(to: head, conditions: conditions)
        }
    }
}
