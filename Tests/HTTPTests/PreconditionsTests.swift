import Testing
import HTTP

private let modified: Int64 = 784_111_777
private let atModified = "Sun, 06 Nov 1994 08:49:37 GMT"
private let afterModified = "Sun, 06 Nov 1994 08:49:38 GMT"
private let beforeModified = "Sun, 06 Nov 1994 08:49:36 GMT"
private let strongTag = EntityTag(opaqueTag: "v1")

/// One row of the evaluation table.
struct PreconditionCase: CustomTestStringConvertible, Sendable {
    var name: String
    var getOrHead = true
    var conditions: Preconditions
    var etag: EntityTag? = strongTag
    var lastModified: Int64? = modified
    var expected: Preconditions.Outcome
    var testDescription: String { name }
}

private func row(_ name: String, getOrHead: Bool = true, _ conditions: Preconditions, etag: EntityTag? = strongTag,
                 lastModified: Int64? = modified, _ expected: Preconditions.Outcome) -> PreconditionCase {
    PreconditionCase(name: name, getOrHead: getOrHead, conditions: conditions, etag: etag, lastModified: lastModified, expected: expected)
}

@Suite("Conditional requests (RFC 9110 §13, http-decisions.md \"Conditional requests\")")
struct PreconditionsTests {
    static let evaluationCases: [PreconditionCase] = [
        row("no conditions", Preconditions(), .proceed),
        // Step 1: If-Match, strong comparison, "*" matches.
        row("If-Match equal", Preconditions(ifMatch: ["\"v1\""]), .proceed),
        row("If-Match different", getOrHead: false, Preconditions(ifMatch: ["\"v2\""]), .preconditionFailed),
        row("If-Match different on GET", Preconditions(ifMatch: ["\"v2\""]), .preconditionFailed),
        row("If-Match weak tag never matches", Preconditions(ifMatch: ["W/\"v1\""]), .preconditionFailed),
        row("If-Match against a weak current tag", Preconditions(ifMatch: ["\"v1\""]),
            etag: EntityTag(opaqueTag: "v1", isWeak: true), .preconditionFailed),
        row("If-Match list", Preconditions(ifMatch: ["\"v0\", \"v1\""]), .proceed),
        row("If-Match on two lines", Preconditions(ifMatch: ["\"v0\"", "\"v1\""]), .proceed),
        row("If-Match *", Preconditions(ifMatch: ["*"]), .proceed),
        row("If-Match * without a tag on the resource", Preconditions(ifMatch: ["*"]), etag: nil, .proceed),
        row("If-Match tag without a tag on the resource", Preconditions(ifMatch: ["\"v1\""]), etag: nil, .preconditionFailed),
        row("If-Match malformed fails closed", Preconditions(ifMatch: ["v1"]), .preconditionFailed),
        row("If-Match empty counts as absent", Preconditions(ifMatch: [""]), .proceed),
        // Step 2: If-Unmodified-Since.
        row("IUS equal", Preconditions(ifUnmodifiedSince: [atModified]), .proceed),
        row("IUS after", Preconditions(ifUnmodifiedSince: [afterModified]), .proceed),
        row("IUS before: modified since", Preconditions(ifUnmodifiedSince: [beforeModified]), .preconditionFailed),
        row("IUS invalid ignored", Preconditions(ifUnmodifiedSince: ["yesterday"]), .proceed),
        row("IUS twice ignored", Preconditions(ifUnmodifiedSince: [beforeModified, beforeModified]), .proceed),
        row("IUS without Last-Modified ignored", Preconditions(ifUnmodifiedSince: [beforeModified]), lastModified: nil, .proceed),
        row("IUS ignored when If-Match present", Preconditions(ifMatch: ["\"v1\""], ifUnmodifiedSince: [beforeModified]), .proceed),
        row("If-Match decides over IUS", Preconditions(ifMatch: ["\"v2\""], ifUnmodifiedSince: [afterModified]), .preconditionFailed),
        // Step 3: If-None-Match, weak comparison, "*" matches, 304 for GET/HEAD else 412.
        row("INM equal on GET", Preconditions(ifNoneMatch: ["\"v1\""]), .notModified),
        row("INM equal on POST", getOrHead: false, Preconditions(ifNoneMatch: ["\"v1\""]), .preconditionFailed),
        row("INM weak tag matches weakly", Preconditions(ifNoneMatch: ["W/\"v1\""]), .notModified),
        row("INM against a weak current tag", Preconditions(ifNoneMatch: ["\"v1\""]),
            etag: EntityTag(opaqueTag: "v1", isWeak: true), .notModified),
        row("INM *", Preconditions(ifNoneMatch: ["*"]), .notModified),
        row("INM * on PUT", getOrHead: false, Preconditions(ifNoneMatch: ["*"]), .preconditionFailed),
        row("INM different", Preconditions(ifNoneMatch: ["\"v2\""]), .proceed),
        row("INM list", Preconditions(ifNoneMatch: ["\"v0\", W/\"v1\""]), .notModified),
        row("INM on two lines", Preconditions(ifNoneMatch: ["\"v0\"", "\"v1\""]), .notModified),
        row("INM malformed does not match", Preconditions(ifNoneMatch: ["v1"]), .proceed),
        row("INM without a tag on the resource", Preconditions(ifNoneMatch: ["\"v1\""]), etag: nil, .proceed),
        // Step 4: If-Modified-Since, GET/HEAD only, 304 when Last-Modified <= date.
        row("IMS equal", Preconditions(ifModifiedSince: [atModified]), .notModified),
        row("IMS later date: <= not only equality", Preconditions(ifModifiedSince: [afterModified]), .notModified),
        row("IMS earlier date: modified", Preconditions(ifModifiedSince: [beforeModified]), .proceed),
        row("IMS as RFC 850", Preconditions(ifModifiedSince: ["Sunday, 06-Nov-94 08:49:37 GMT"]), .notModified),
        row("IMS as asctime", Preconditions(ifModifiedSince: ["Sun Nov  6 08:49:37 1994"]), .notModified),
        row("IMS on POST ignored", getOrHead: false, Preconditions(ifModifiedSince: [atModified]), .proceed),
        row("IMS invalid ignored", Preconditions(ifModifiedSince: ["Sun, 06 Nov 1994 08:49:37 UTC"]), .proceed),
        row("IMS twice ignored", Preconditions(ifModifiedSince: [atModified, atModified]), .proceed),
        row("IMS without Last-Modified ignored", Preconditions(ifModifiedSince: [afterModified]), lastModified: nil, .proceed),
        row("IMS ignored when INM present", Preconditions(ifNoneMatch: ["\"v2\""], ifModifiedSince: [afterModified]), .proceed),
        row("IMS ignored when INM malformed", Preconditions(ifNoneMatch: ["v1"], ifModifiedSince: [afterModified]), .proceed),
        row("INM match wins over IMS", Preconditions(ifNoneMatch: ["\"v1\""], ifModifiedSince: [beforeModified]), .notModified),
        // Order across steps.
        row("If-Match failure before INM", Preconditions(ifMatch: ["\"v2\""], ifNoneMatch: ["\"v1\""]), .preconditionFailed),
        row("IUS failure before INM", Preconditions(ifNoneMatch: ["\"v1\""], ifUnmodifiedSince: [beforeModified]), .preconditionFailed),
        row("If-Match pass then INM", Preconditions(ifMatch: ["\"v1\""], ifNoneMatch: ["\"v1\""]), .notModified),
        row("If-Match pass then IMS", Preconditions(ifMatch: ["\"v1\""], ifModifiedSince: [atModified]), .notModified),
        row("IUS pass then IMS", Preconditions(ifModifiedSince: [atModified], ifUnmodifiedSince: [atModified]), .notModified),
    ]

    @Test("evaluation steps 1–4 in RFC 9110 §13.2.2 order", arguments: evaluationCases)
    func evaluation(row: PreconditionCase) {
        #expect(row.conditions.evaluate(isGetOrHead: row.getOrHead, etag: row.etag, lastModified: row.lastModified) == row.expected)
    }

    @Test("If-Range: strong ETag comparison or exact date", arguments: [
        ([String](), strongTag, true),
        (["\"v1\""], strongTag, true),
        ([" \"v1\" "], strongTag, true),
        (["\"v2\""], strongTag, false),
        (["W/\"v1\""], strongTag, false),                              // a weak tag never matches
        (["\"v1\""], EntityTag(opaqueTag: "v1", isWeak: true), false),
        (["\"v1\""], nil, false),
        ([atModified], strongTag, true),
        (["Sun Nov  6 08:49:37 1994"], strongTag, true),
        ([afterModified], strongTag, false),                           // exact match only
        ([beforeModified], strongTag, false),
        (["garbage"], strongTag, false),
        (["\"v1"], strongTag, false),
        ([""], strongTag, false),
        (["\"v1\"", "\"v1\""], strongTag, false),                      // repeated
    ] as [([String], EntityTag?, Bool)])
    func ifRange(values: [String], etag: EntityTag?, expected: Bool) {
        #expect(Preconditions(ifRange: values).ifRangeAllowsPartial(etag: etag, lastModified: modified) == expected)
    }

    @Test("If-Range with a date and no Last-Modified is false")
    func ifRangeWithoutLastModified() {
        #expect(!Preconditions(ifRange: [atModified]).ifRangeAllowsPartial(etag: strongTag, lastModified: nil))
    }

    @Test("dates past 2038 compare correctly")
    func past2038() {
        let late: Int64 = 4_102_444_800  // 2100-01-01
        let conditions = Preconditions(ifModifiedSince: ["Fri, 01 Jan 2100 00:00:00 GMT"])
        #expect(conditions.evaluate(isGetOrHead: true, etag: nil, lastModified: late) == .notModified)
        #expect(conditions.evaluate(isGetOrHead: true, etag: nil, lastModified: late + 1) == .proceed)
    }
}
