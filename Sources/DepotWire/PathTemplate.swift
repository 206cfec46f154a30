/// A URL path pattern such as `/v1/packs/{pack}/{version}/files/{path+}`: literal segments, named parameters
/// (`{name}`, exactly one segment) and, last, a rest parameter (`{name+}`: one or more segments, `{name*}`:
/// zero or more). The same value builds a path (percent-encoding every segment) and matches decoded segments.
///
/// A malformed pattern does not trap: it is recorded in ``problem``, and the server's route table refuses to
/// start with it.
public struct PathTemplate: Sendable, Hashable, CustomStringConvertible {
    /// One segment of the pattern.
    public enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
        /// The remaining segments, at least `minimum` of them (0 or 1), joined with `/`.
        case rest(String, minimum: Int)
    }

    /// The pattern as written.
    public let pattern: String
    public let segments: [Segment]
    /// Why the pattern is malformed, or nil.
    public let problem: String?

    public init(_ pattern: String) {
        self.pattern = pattern
        var segments: [Segment] = []
        var problem: String?
        if !pattern.hasPrefix("/") { problem = "must start with /" }
        var names = Set<String>()
        let parts = pattern.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            guard part.hasPrefix("{") || part.contains("{") || part.contains("}") else {
                segments.append(.literal(String(part)))
                continue
            }
            guard part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2 else {
                problem = problem ?? "segment \"\(part)\" is neither a literal nor {name}"
                segments.append(.literal(String(part)))
                continue
            }
            var name = String(part.dropFirst().dropLast())
            var minimum: Int?
            if name.hasSuffix("+") { minimum = 1 } else if name.hasSuffix("*") { minimum = 0 }
            if minimum != nil { name.removeLast() }
            if name.isEmpty || !name.utf8.allSatisfy({ PercentEncoding.isUnreserved($0) && $0 != UInt8(ascii: "~") }) {
                problem = problem ?? "parameter name \"\(name)\" is not a plain name"
            }
            if !names.insert(name).inserted { problem = problem ?? "parameter {\(name)} appears twice" }
            if let minimum {
                if index != parts.count - 1 { problem = problem ?? "{\(name)\(minimum == 0 ? "*" : "+")} must be the last segment" }
                segments.append(.rest(name, minimum: minimum))
            } else {
                segments.append(.parameter(name))
            }
        }
        self.segments = segments
        self.problem = problem
    }

    public var description: String { pattern }

    // MARK: - Building

    /// The path with each parameter filled in and percent-encoded (a rest parameter segment by segment, split
    /// at `/`). A missing value is an empty segment; an empty value of a `{name*}` parameter adds no segment.
    public func path(_ values: [String: String]) -> String {
        var out = ""
        for segment in segments {
            switch segment {
            case .literal(let text):
                out += "/" + text
            case .parameter(let name):
                out += "/" + PercentEncoding.encodeSegment(values[name] ?? "")
            case .rest(let name, let minimum):
                let value = values[name] ?? ""
                if value.isEmpty && minimum == 0 { continue }
                for part in value.split(separator: "/", omittingEmptySubsequences: false) {
                    out += "/" + PercentEncoding.encodeSegment(String(part))
                }
            }
        }
        return out.isEmpty ? "/" : out
    }

    // MARK: - Matching

    /// The parameters when `segments` (decoded, without the leading root: `/a/b` is `["a", "b"]`) have this
    /// pattern's shape; nil otherwise. Parameters may be empty segments: what a value may be is the route's
    /// business (a malformed value is a `400`, not a missing route).
    public func match(_ path: [String]) -> PathParameters? {
        var values: [(String, String)] = []
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .literal(let text):
                guard index < path.count, path[index] == text else { return nil }
            case .parameter(let name):
                guard index < path.count else { return nil }
                values.append((name, path[index]))
            case .rest(let name, let minimum):
                let rest = path[min(index, path.count)...]
                guard rest.count >= minimum else { return nil }
                values.append((name, rest.joined(separator: "/")))
                return PathParameters(values)
            }
        }
        return path.count == segments.count ? PathParameters(values) : nil
    }

    /// Matches a raw path such as `/v1/packs/level2/manifest` (percent-decoded segment by segment; a query is
    /// ignored); nil when it does not match or cannot be decoded.
    public func match(path raw: String) -> PathParameters? {
        let path = raw.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path.hasPrefix("/") else { return nil }
        var decoded: [String] = []
        for part in path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = PercentEncoding.decodeSegment(part) else { return nil }
            decoded.append(segment)
        }
        return match(decoded)
    }

    /// Orders templates from the most specific: segment by segment a literal before a parameter before a rest
    /// parameter. Of two templates that match the same path, the one that sorts first is the better match.
    public static func moreSpecific(_ a: PathTemplate, than b: PathTemplate) -> Bool {
        for (x, y) in zip(a.segments, b.segments) {
            let (rx, ry) = (rank(x), rank(y))
            if rx != ry { return rx < ry }
        }
        return a.segments.count > b.segments.count
    }

    private static func rank(_ segment: Segment) -> Int {
        switch segment {
        case .literal: 0
        case .parameter: 1
        case .rest: 2
        }
    }

    /// Whether both templates have the same shape (the same literals, parameters and rest in the same places,
    /// whatever the names): two such templates can never be told apart by a path.
    public func hasSameShape(as other: PathTemplate) -> Bool {
        guard segments.count == other.segments.count else { return false }
        for (x, y) in zip(segments, other.segments) {
            switch (x, y) {
            case (.literal(let a), .literal(let b)) where a == b: continue
            case (.parameter, .parameter): continue
            case (.rest(_, let a), .rest(_, let b)) where a == b: continue
            default: return false
            }
        }
        return true
    }
}
