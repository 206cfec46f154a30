import HTTP
import Server

/// A selected representation (product list variant, pack manifest, pack file) and the rules that turn a
/// request into a 200, 206, 304, 412 or 416 for it (RFC 9110 §13, §14; http-decisions.md).
struct Representation {
    enum Source {
        case bytes([UInt8])
        case file(OpenFile)
    }

    var source: Source
    var etag: EntityTag
    var lastModified: Int64?
    var contentType: String
    var cacheControl: String
    /// Fields sent with 200 and 206 only (e.g. `Content-Encoding`).
    var contentFields: HTTPFields = HTTPFields()
    /// Whether `Vary: Accept-Encoding` is sent.
    var varies = false
    var route: String
    /// `Last-Modified` already formatted (a version formats its publish time once).
    var lastModifiedText: String?

    var length: Int64 {
        switch source {
        case .bytes(let b): Int64(b.count)
        case .file(let f): f.size
        }
    }

    /// Validator and caching fields: what 200, 206 and 304 all carry.
    func validatorFields() -> HTTPFields {
        var fields = HTTPFields()
        fields.append("ETag", etag.headerValue)
        if let lastModified { fields.append("Last-Modified", lastModifiedText ?? HTTPDate.format(lastModified)) }
        fields.append("Cache-Control", cacheControl)
        if varies { fields.append("Vary", "Accept-Encoding") }
        return fields
    }

    /// The full 200 response.
    func fullResponse() -> Response {
        var fields = validatorFields()
        fields.append("Content-Type", contentType)
        fields.append("Accept-Ranges", "bytes")
        for field in contentFields { fields.append(field.displayName, field.value) }
        return Response(status: 200, headers: fields, body: body(offset: 0, length: length), route: route)
    }

    /// 304: validators only, no body (http-decisions.md).
    func notModifiedResponse() -> Response {
        Response(status: 304, headers: validatorFields(), body: .empty, route: route)
    }

    private func body(offset: Int64, length: Int64) -> ResponseBody {
        switch source {
        case .bytes(let bytes):
            if offset == 0 && length == Int64(bytes.count) { return .bytes(bytes) }
            return .bytes(Array(bytes[Int(offset)..<Int(offset + length)]))
        case .file(let file):
            return .file(FileRegion(file: file, offset: offset, length: length))
        }
    }

    /// What a GET or HEAD of a representation gets, decided from its validators and length alone (RFC 9110 §13.2.2,
    /// §14.2): the edge asks this of a pack file it serves from its cache, without the file.
    enum Outcome: Equatable {
        case full
        case notModified
        case preconditionFailed
        case unsatisfiable
        case partial([ByteRange])
    }

    static func outcome(of head: RequestHead, conditions: RequestConditions, etag: EntityTag, lastModified: Int64?,
                        length: Int64) -> Outcome {
        if conditions.isEmpty { return .full }
        switch conditions.preconditions.evaluate(isGetOrHead: true, etag: etag, lastModified: lastModified) {
        case .notModified: return .notModified
        case .preconditionFailed: return .preconditionFailed
        case .proceed: break
        }
        // RFC 9110 §14.2: ranges for GET only; HEAD answers with the headers of the full 200.
        guard head.method == .get, !conditions.range.isEmpty,
              conditions.preconditions.ifRangeAllowsPartial(etag: etag, lastModified: lastModified) else {
            return .full
        }
        switch ByteRangeSet.decide(conditions.range, size: length) {
        case .full: return .full
        case .unsatisfiable: return .unsatisfiable
        case .partial(let ranges): return .partial(ranges)
        }
    }

    /// Answers a GET or HEAD.
    func respond(to head: RequestHead, conditions: RequestConditions) -> Response {
        switch Self.outcome(of: head, conditions: conditions, etag: etag, lastModified: lastModified, length: length) {
        case .full:
            return fullResponse()
        case .notModified:
            return notModifiedResponse()
        case .preconditionFailed:
            var error = APIError(412, "precondition_failed", "A precondition of the request does not hold.")
            if varies { error.headers.append("Vary", "Accept-Encoding") }
            return error.response(route: route)
        case .unsatisfiable:
            var error = APIError(416, "range_not_satisfiable", "The requested range is not satisfiable.")
            error.headers.append("Content-Range", ByteRangeSet.unsatisfiedContentRange(completeLength: length))
            // Whether a range fits depends on the encoding chosen, so this answer varies like the 200 would.
            if varies { error.headers.append("Vary", "Accept-Encoding") }
            return error.response(route: route)
        case .partial(let ranges):
            var fields = validatorFields()
            fields.append("Accept-Ranges", "bytes")
            // The ranges count the bytes of this representation as sent (a gzip variant's compressed bytes), and a
            // 206 carries the representation fields its 200 would (RFC 9110 §14.6), `Content-Encoding` included,
            // whether it has one part or several (http-decisions.md).
            if ranges.count == 1 {
                let range = ranges[0]
                fields.append("Content-Type", contentType)
                for field in contentFields { fields.append(field.displayName, field.value) }
                fields.append("Content-Range", range.contentRange(completeLength: length))
                return Response(status: 206, headers: fields, body: body(offset: range.offset, length: range.length), route: route)
            }
            let multipart = MultipartByteRanges(ranges: ranges, totalSize: length, contentType: contentType,
                                                boundary: MultipartByteRanges.makeBoundary())
            fields.append("Content-Type", multipart.contentTypeValue)
            for field in contentFields { fields.append(field.displayName, field.value) }
            var segments: [BodySegment] = []
            for part in multipart.parts {
                segments.append(.bytes(part.head))
                switch body(offset: part.range.offset, length: part.range.length) {
                case .bytes(let b): segments.append(.bytes(b))
                case .file(let region): segments.append(.file(region))
                default: break
                }
            }
            segments.append(.bytes(multipart.trailer))
            return Response(status: 206, headers: fields, body: .segments(segments), route: route)
        }
    }
}
