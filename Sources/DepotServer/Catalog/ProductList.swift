import Glibc
import DepotCore
import DepotCrypto
package import HTTP
package import Server

/// One product list (v1 or v2) with both variants and every response that does not depend on the request
/// precomputed, so the common requests cost a lookup and a copy.
package final class ProductList: Sendable {
    /// One encoding of the list (identity or gzip) with its precomputed answers.
    package final class Variant: Sendable {
        /// The bytes of the list in this encoding.
        package let body: [UInt8]
        let etag: EntityTag
        let ok: Response
        let notModified: Response
        /// `etag` as sent in `ETag`.
        package let etagHeader: String
        /// The same, as bytes (compared with a request's `If-None-Match` before any String is made).
        let etagBytes: [UInt8]

        init(body: [UInt8], etag: EntityTag, ok: Response, notModified: Response) {
            self.body = body
            self.etag = etag
            self.etagHeader = etag.headerValue
            self.etagBytes = Array(etag.headerValue.utf8)
            self.ok = ok
            self.notModified = notModified
        }
    }

    let name: String
    /// The uncompressed variant.
    package let identity: Variant
    /// The gzip variant.
    package let gzip: Variant
    let lastModified: Int64
    let cacheControl: String

    /// - Parameters:
    ///   - body: the identity bytes.
    ///   - lastModified: when these bytes last changed.
    package convenience init(name: String, body: [UInt8], lastModified: Int64, cacheControl: String) throws {
        try self.init(name: name, body: body, compressed: Gzip.compress(body), lastModified: lastModified, cacheControl: cacheControl)
    }

    init(name: String, body: [UInt8], compressed: [UInt8], lastModified: Int64, cacheControl: String) {
        self.name = name
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        identity = Self.variant(name: name, body: body, gzip: false, lastModified: lastModified, cacheControl: cacheControl)
        gzip = Self.variant(name: name, body: compressed, gzip: true, lastModified: lastModified, cacheControl: cacheControl)
    }

    /// A strong entity tag from the bytes themselves (the same on every replica serving the same bytes).
    static func entityTag(for bytes: [UInt8]) -> EntityTag {
        EntityTag(opaqueTag: Hex.encode(SHA256.hash(bytes).prefix(16)))
    }

    private static func variant(name: String, body: [UInt8], gzip: Bool, lastModified: Int64, cacheControl: String) -> Variant {
        let representation = representation(body: body, gzip: gzip, etag: entityTag(for: body), lastModified: lastModified,
                                            cacheControl: cacheControl)
        var ok = representation.fullResponse()
        ok.freeze()
        var notModified = representation.notModifiedResponse()
        notModified.freeze()
        return Variant(body: body, etag: representation.etag, ok: ok, notModified: notModified)
    }

    /// The list as a ``Representation``; `etag` is the variant's, hashed once when the catalog changes.
    private static func representation(body: [UInt8], gzip: Bool, etag: EntityTag, lastModified: Int64, cacheControl: String) -> Representation {
        var contentFields = HTTPFields()
        if gzip { contentFields.append("Content-Encoding", "gzip") }
        return Representation(source: .bytes(body), etag: etag, lastModified: lastModified,
                              contentType: "application/json; charset=utf-8", cacheControl: cacheControl,
                              contentFields: contentFields, varies: true, route: "products")
    }

    /// An equal list built from fresh copies of every buffer, for another event loop: two loops that share
    /// reference-counted objects on the hot path make their cache lines bounce between cores.
    func replica() -> ProductList {
        ProductList(name: name, body: identity.body.withUnsafeBufferPointer { Array($0) },
                    compressed: gzip.body.withUnsafeBufferPointer { Array($0) }, lastModified: lastModified,
                    cacheControl: String(decoding: Array(cacheControl.utf8), as: UTF8.self))
    }

    /// The value of the request's only conditional field when that is a single `If-None-Match` line; nil otherwise.
    static func onlyIfNoneMatch(_ fields: HTTPFields) -> String? {
        var found: String?
        for field in fields {
            switch field.name {
            case "if-none-match":
                if found != nil { return nil }
                found = field.value
            case "if-match", "if-unmodified-since", "if-modified-since", "if-range", "range":
                return nil
            default:
                break
            }
        }
        return found
    }

    /// Answers a GET or HEAD of this list from the head's bytes with a precomputed response (200 or 304 of either
    /// variant; HEAD shares the 200), or nil when the request needs more than that (another method, a range, a
    /// precondition other than one `If-None-Match` or one `If-Modified-Since`, an unusual `Accept-Encoding`):
    /// `respond(to:)` answers those.
    package func respond(toRaw head: RawRequestHead) -> Response? {
        guard head.isGetOrHead,
              head.occurrences(.ifMatch) == 0, head.occurrences(.ifUnmodifiedSince) == 0,
              head.occurrences(.range) == 0, head.occurrences(.ifRange) == 0,
              let useGzip = AcceptEncoding.choosesGzip(head) else { return nil }
        let variant = useGzip ? gzip : identity
        switch head.occurrences(.ifNoneMatch) {
        case 0:
            break
        case 1:
            // RFC 9110 §13.1.2: an identical tag matches under the weak comparison; with no If-Match or
            // If-Unmodified-Since before it, nothing else decides first. Any other value needs the list parsed.
            guard let value = head.value(.ifNoneMatch), value.count == variant.etagBytes.count,
                  variant.etagBytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, value.baseAddress!, value.count) == 0 }) else {
                return nil
            }
            return variant.notModified
        default:
            return nil
        }
        // Step 4: If-Modified-Since, one valid date, only without If-None-Match (§13.1.3).
        if head.occurrences(.ifModifiedSince) == 1, let value = head.value(.ifModifiedSince),
           let date = HTTPDate.parse(bytes: value), lastModified <= date {
            return variant.notModified
        }
        return variant.ok
    }

    /// Answers a GET or HEAD of this list.
    package func respond(to head: RequestHead) -> Response {
        let useGzip = AcceptEncoding.choosesGzip(head.fields)
        let variant = useGzip ? gzip : identity
        // The most common revalidation, one If-None-Match carrying exactly this variant's tag, is answered
        // without parsing: an identical tag matches under the weak comparison of step 3 (RFC 9110 §13.1.2), and
        // with no If-Match/If-Unmodified-Since before it nothing else can decide first.
        if let tag = Self.onlyIfNoneMatch(head.fields), tag == variant.etagHeader { return variant.notModified }
        let conditions = RequestConditions(head.fields)
        if conditions.isEmpty { return variant.ok }
        switch conditions.preconditions.evaluate(isGetOrHead: true, etag: variant.etag, lastModified: lastModified) {
        case .notModified:
            return variant.notModified
        case .proceed where conditions.range.isEmpty:
            return variant.ok
        default:
            // Ranges and the rarer conditions: the variant's stored tag, not a hash of its bytes per request.
            return Self.representation(body: variant.body, gzip: useGzip, etag: variant.etag, lastModified: lastModified, cacheControl: cacheControl)
                .respond(to: head, conditions: conditions)
        }
    }
}
