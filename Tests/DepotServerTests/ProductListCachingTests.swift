import DepotTestSupport
import Foundation
import HTTP
import Testing
import DepotServer

/// spec §4.1 caching rules and http-decisions.md "Conditional requests" steps 1–4, over both lists.
@Suite struct ProductListCachingTests {
    // MARK: - Validator and caching fields

    @Test(arguments: ListPath.allCases)
    func validatorFieldsOnEveryAnswer(_ list: ListPath) async throws {
        try await withDepot { depot in
            let first = try await depot.send("GET", list.rawValue)
            let etag = try #require(first.header("ETag"))
            let tag = try #require(EntityTag(parsing: etag))
            #expect(!tag.isWeak, "strong ETag")
            #expect(!tag.opaqueTag.isEmpty)
            let lastModified = try #require(first.header("Last-Modified"))
            // IMF-fixdate in GMT.
            let seconds = try #require(HTTPDate.parse(lastModified))
            #expect(HTTPDate.format(seconds) == lastModified)
            #expect(seconds <= Int64(Date().timeIntervalSince1970), "not in the future")
            // spec §4.1: the sample ships the validator record, so Last-Modified is the recorded time.
            #expect(seconds == (try TreeFiles.recordedTime(catalog: depot.catalogDirectory, list: list)))
            #expect(first.header("Cache-Control") == "public, no-cache")
            #expect(first.header("Vary") == "Accept-Encoding")
            #expect(first.header("Content-Encoding") == nil)
            // The same bytes give the same validators, request after request.
            let second = try await depot.send("GET", list.rawValue)
            #expect(second.body == first.body)
            #expect(ListValidators(second) == ListValidators(first))
            // The ETag is that of these bytes: the other list's bytes have another.
            let other = try await depot.send("GET", list == .v1 ? ListPath.v2.rawValue : ListPath.v1.rawValue)
            #expect(other.header("ETag") != etag)
        }
    }

    struct MaxAgeRow: Sendable, CustomTestStringConvertible {
        let maxAge: Int
        let cacheControl: String
        var testDescription: String { "catalogMaxAge \(maxAge) → \(cacheControl)" }
    }

    static let maxAgeRows = [
        MaxAgeRow(maxAge: 0, cacheControl: "public, no-cache"),
        MaxAgeRow(maxAge: 1, cacheControl: "public, max-age=1"),
        MaxAgeRow(maxAge: 300, cacheControl: "public, max-age=300"),
        MaxAgeRow(maxAge: 86_400, cacheControl: "public, max-age=86400"),
    ]

    @Test(arguments: maxAgeRows)
    func cacheControlFollowsCatalogMaxAge(_ row: MaxAgeRow) async throws {
        try await withDepot(configure: { $0.catalogMaxAge = row.maxAge }) { depot in
            for list in ListPath.allCases {
                let plain = try await depot.send("GET", list.rawValue)
                #expect(plain.header("Cache-Control") == row.cacheControl, "\(list)")
                let gzip = try await depot.send("GET", list.rawValue, [("Accept-Encoding", "gzip")])
                #expect(gzip.header("Cache-Control") == row.cacheControl, "\(list) gzip")
                let revalidated = try await depot.send("GET", list.rawValue, [("If-None-Match", try #require(plain.header("ETag")))])
                #expect(revalidated.status == 304)
                #expect(revalidated.header("Cache-Control") == row.cacheControl, "\(list) 304")
            }
        }
    }

    // MARK: - Conditional requests, steps 1–4

    /// A conditional request; `{etag}`, `{weak}` (W/ form), `{lm}`, `{lm-1}`, `{lm+1}`, `{lm850}`, `{lmasc}` are filled in.
    struct ConditionRow: Sendable, CustomTestStringConvertible {
        let headers: [(String, String)]
        let status: Int
        let note: String
        init(_ note: String, _ headers: [(String, String)], _ status: Int) {
            self.headers = headers
            self.status = status
            self.note = note
        }
        var testDescription: String { "\(note) → \(status)" }
    }

    static let conditionRows: [ConditionRow] = [
        // Step 1: If-Match, strong comparison, `*` matches.
        ConditionRow("If-Match current", [("If-Match", "{etag}")], 200),
        ConditionRow("If-Match *", [("If-Match", "*")], 200),
        ConditionRow("If-Match list containing current", [("If-Match", "\"other\", {etag}")], 200),
        ConditionRow("If-Match mismatch", [("If-Match", "\"other\"")], 412),
        ConditionRow("If-Match weak form of current (strong comparison)", [("If-Match", "{weak}")], 412),
        ConditionRow("If-Match mismatch wins over If-None-Match match", [("If-Match", "\"other\""), ("If-None-Match", "{etag}")], 412),
        // Step 2: If-Unmodified-Since, only without If-Match.
        ConditionRow("If-Unmodified-Since equal", [("If-Unmodified-Since", "{lm}")], 200),
        ConditionRow("If-Unmodified-Since later", [("If-Unmodified-Since", "{lm+1}")], 200),
        ConditionRow("If-Unmodified-Since earlier", [("If-Unmodified-Since", "{lm-1}")], 412),
        ConditionRow("If-Unmodified-Since invalid date", [("If-Unmodified-Since", "yesterday")], 200),
        ConditionRow("If-Unmodified-Since ignored with If-Match", [("If-Match", "{etag}"), ("If-Unmodified-Since", "{lm-1}")], 200),
        // Step 3: If-None-Match, weak comparison, lists, `*`.
        ConditionRow("If-None-Match current", [("If-None-Match", "{etag}")], 304),
        ConditionRow("If-None-Match weak form of current", [("If-None-Match", "{weak}")], 304),
        ConditionRow("If-None-Match *", [("If-None-Match", "*")], 304),
        ConditionRow("If-None-Match list", [("If-None-Match", "\"a\", \"b\",{etag}")], 304),
        ConditionRow("If-None-Match over two lines", [("If-None-Match", "\"a\""), ("If-None-Match", "{etag}")], 304),
        ConditionRow("If-None-Match mismatch", [("If-None-Match", "\"a\", W/\"b\"")], 200),
        ConditionRow("If-None-Match unquoted (malformed)", [("If-None-Match", "{bare}")], 200),
        ConditionRow("If-None-Match with If-Match current", [("If-Match", "{etag}"), ("If-None-Match", "{etag}")], 304),
        ConditionRow("If-None-Match with If-Unmodified-Since equal", [("If-Unmodified-Since", "{lm}"), ("If-None-Match", "{etag}")], 304),
        // Step 4: If-Modified-Since, `<=`, ignored when If-None-Match is present, invalid or repeated.
        ConditionRow("If-Modified-Since equal", [("If-Modified-Since", "{lm}")], 304),
        ConditionRow("If-Modified-Since later", [("If-Modified-Since", "{lm+1}")], 304),
        ConditionRow("If-Modified-Since much later", [("If-Modified-Since", "Fri, 31 Dec 2100 23:59:59 GMT")], 304),
        ConditionRow("If-Modified-Since earlier", [("If-Modified-Since", "{lm-1}")], 200),
        ConditionRow("If-Modified-Since RFC 850 equal", [("If-Modified-Since", "{lm850}")], 304),
        ConditionRow("If-Modified-Since asctime equal", [("If-Modified-Since", "{lmasc}")], 304),
        ConditionRow("If-Modified-Since invalid date", [("If-Modified-Since", "not a date")], 200),
        ConditionRow("If-Modified-Since list of dates", [("If-Modified-Since", "{lm}, {lm}")], 200),
        ConditionRow("If-Modified-Since repeated", [("If-Modified-Since", "{lm}"), ("If-Modified-Since", "{lm}")], 200),
        ConditionRow("If-Modified-Since ignored with mismatching If-None-Match", [("If-None-Match", "\"a\""), ("If-Modified-Since", "{lm+1}")], 200),
        ConditionRow("If-Modified-Since ignored with malformed If-None-Match", [("If-None-Match", "{bare}"), ("If-Modified-Since", "{lm}")], 200),
        ConditionRow("If-Modified-Since earlier with matching If-None-Match", [("If-None-Match", "{etag}"), ("If-Modified-Since", "{lm-1}")], 304),
        ConditionRow("If-Unmodified-Since earlier beats If-Modified-Since", [("If-Unmodified-Since", "{lm-1}"), ("If-Modified-Since", "{lm}")], 412),
    ]

    /// Fills the placeholders of a row for a list with these validators.
    static func fill(_ value: String, etag: String, lastModified: Int64) -> String {
        let bare = String(etag.dropFirst().dropLast())
        return value
            .replacingOccurrences(of: "{etag}", with: etag)
            .replacingOccurrences(of: "{weak}", with: "W/" + etag)
            .replacingOccurrences(of: "{bare}", with: bare)
            .replacingOccurrences(of: "{lm}", with: HTTPDate.format(lastModified))
            .replacingOccurrences(of: "{lm-1}", with: HTTPDate.format(lastModified - 1))
            .replacingOccurrences(of: "{lm+1}", with: HTTPDate.format(lastModified + 1))
            .replacingOccurrences(of: "{lm850}", with: rfc850(lastModified))
            .replacingOccurrences(of: "{lmasc}", with: asctime(lastModified))
    }

    static let days = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func parts(_ seconds: Int64) -> (day: Int, month: Int, year: Int, time: String, weekday: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(seconds)))
        let time = String(format: "%02d:%02d:%02d", c.hour!, c.minute!, c.second!)
        return (c.day!, c.month!, c.year!, time, Int((seconds / 86_400) % 7))
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`.
    static func rfc850(_ seconds: Int64) -> String {
        let p = parts(seconds)
        return "\(days[p.weekday]), \(String(format: "%02d", p.day))-\(months[p.month - 1])-\(String(format: "%02d", p.year % 100)) \(p.time) GMT"
    }

    /// `Sun Nov  6 08:49:37 1994`.
    static func asctime(_ seconds: Int64) -> String {
        let p = parts(seconds)
        let day = p.day < 10 ? " \(p.day)" : "\(p.day)"
        return "\(days[p.weekday].prefix(3)) \(months[p.month - 1]) \(day) \(p.time) \(p.year)"
    }

    @Test(arguments: ListPath.allCases, ["GET", "HEAD"])
    func conditionalRequests(_ list: ListPath, _ method: String) async throws {
        try await withDepot { depot in
            let plain = try await depot.send("GET", list.rawValue)
            let etag = try #require(plain.header("ETag"))
            let lastModified = try #require(plain.header("Last-Modified").flatMap(HTTPDate.parse))
            for row in Self.conditionRows {
                let headers = row.headers.map { ($0.0, Self.fill($0.1, etag: etag, lastModified: lastModified)) }
                let response = try await depot.send(method, list.rawValue, headers)
                #expect(response.status == row.status, "\(method) \(list.rawValue) \(row.note): \(headers)")
                switch row.status {
                case 200:
                    #expect(ListValidators(response) == ListValidators(plain), "\(row.note)")
                    if method == "GET" { #expect(response.body == plain.body, "\(row.note)") }
                case 304:
                    #expect(response.header("ETag") == etag, "\(row.note)")
                case 412:
                    #expect(response.header("Content-Type") == "application/json; charset=utf-8", "\(row.note)")
                    if method == "GET" { #expect(response.text.contains("\"precondition_failed\""), "\(row.note)") }
                default:
                    break
                }
            }
        }
    }

    @Test(arguments: ListPath.allCases, ["GET identity", "HEAD identity", "GET gzip", "HEAD gzip"])
    func notModifiedCarriesValidatorsAndNoBody(_ list: ListPath, _ request: String) async throws {
        let method = String(request.split(separator: " ")[0])
        let coding = String(request.split(separator: " ")[1])
        try await withDepot { depot in
            let plain = try await depot.send("GET", list.rawValue, [("Accept-Encoding", coding)])
            let etag = try #require(plain.header("ETag"))
            for condition in [("If-None-Match", etag), ("If-Modified-Since", try #require(plain.header("Last-Modified")))] {
                let bytes = try await depot.sendUntilClose(method, list.rawValue, [("Accept-Encoding", coding), condition])
                let text = String(decoding: bytes, as: UTF8.self)
                let head = try #require(text.components(separatedBy: "\r\n\r\n").first)
                #expect(text == head + "\r\n\r\n", "no body after a 304 (\(condition.0))")
                #expect(head.hasPrefix("HTTP/1.1 304 "))
                let fields = Self.fields(head)
                #expect(fields["etag"] == etag)
                #expect(fields["date"].flatMap(HTTPDate.parse) != nil)
                #expect(fields["cache-control"] == "public, no-cache")
                #expect(fields["vary"] == "Accept-Encoding")
                #expect(fields["last-modified"] == plain.header("Last-Modified"))
                #expect(fields["server"] == "depot")
                #expect(fields["content-type"] == nil)
                #expect(fields["content-length"] == nil)
                #expect(fields["content-encoding"] == nil)
                #expect(fields["content-range"] == nil)
            }
        }
    }

    static func fields(_ head: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            result[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return result
    }

    @Test func preconditionsDoNotReachUnknownRoutes() async throws {
        try await withDepot { depot in
            // http-decisions.md: preconditions on a 404 resource are ignored.
            let star = try await depot.send("GET", "/products_v3.json", [("If-None-Match", "*")])
            let ifMatch = try await depot.send("GET", "/products_v3.json", [("If-Match", "\"x\"")])
            #expect(star.status == 404)
            #expect(ifMatch.status == 404)
        }
    }
}
