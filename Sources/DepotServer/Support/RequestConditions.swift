import HTTP

/// The conditional and range fields of a request, gathered in one pass over its header fields.
struct RequestConditions {
    var preconditions = Preconditions()
    var range: [String] = []
    /// No conditional or range field at all: the common case, answered from precomputed responses.
    var isEmpty = true

    init(_ fields: HTTPFields) {
        for field in fields {
            switch field.name {
            case "if-match": preconditions.ifMatch.append(field.value); isEmpty = false
            case "if-none-match": preconditions.ifNoneMatch.append(field.value); isEmpty = false
            case "if-modified-since": preconditions.ifModifiedSince.append(field.value); isEmpty = false
            case "if-unmodified-since": preconditions.ifUnmodifiedSince.append(field.value); isEmpty = false
            case "if-range": preconditions.ifRange.append(field.value); isEmpty = false
            case "range": range.append(field.value); isEmpty = false
            default: break
            }
        }
    }
}

/// `Accept-Encoding` negotiation (RFC 9110 §12.5.3), for gzip only.
enum AcceptEncoding {
    /// True when the client accepts gzip: listed with q > 0 (or `x-gzip`), or covered by `*` with q > 0.
    static func acceptsGzip(_ fields: HTTPFields) -> Bool {
        var gzipQ: Double?
        var anyQ: Double?
        for field in fields where field.name == "accept-encoding" {
            for element in field.value.split(separator: ",") {
                let parts = element.split(separator: ";")
                guard let first = parts.first else { continue }
                let coding = first.trimmingOWS().lowercased()
                var q = 1.0
                for parameter in parts.dropFirst() {
                    let p = parameter.trimmingOWS()
                    if p.lowercased().hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
                }
                if coding == "gzip" || coding == "x-gzip" { gzipQ = max(gzipQ ?? 0, q) } else if coding == "*" { anyQ = q }
            }
        }
        if let gzipQ { return gzipQ > 0 }
        if let anyQ { return anyQ > 0 }
        return false
    }
}
