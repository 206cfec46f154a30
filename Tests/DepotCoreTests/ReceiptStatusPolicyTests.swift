import Testing
import DepotCore

/// spec §4.2 error table, one row per Apple status.
@Suite struct ReceiptStatusPolicyTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let status: Int
        let isRetryable: Bool?
        let httpStatus: Int?
        let outcome: AppleOutcome
        init(_ status: Int, retryable: Bool? = nil, http: Int? = nil, _ outcome: AppleOutcome) {
            self.status = status
            self.isRetryable = retryable
            self.httpStatus = http
            self.outcome = outcome
        }
        var testDescription: String {
            "\(status) is-retryable=\(isRetryable.map(String.init) ?? "-") http=\(httpStatus.map(String.init) ?? "-") → \(outcome)"
        }
    }

    static let rows: [Row] = [
        Row(0, .ok),
        Row(0, http: 200, .ok),
        Row(21006, .okSubscriptionExpired),
        Row(21007, .retryInSandbox),
        Row(21008, .retryInProduction),
        Row(21002, .retryOnceThenInvalid),
        Row(21002, retryable: true, .retryOnceThenInvalid),
        Row(21003, .invalid),
        Row(21010, .invalid),
        Row(21003, retryable: true, .invalid),
        // Temporary problems, unless Apple says explicitly that a retry will not help.
        Row(21005, .unavailable),
        Row(21005, retryable: true, .unavailable),
        Row(21005, retryable: false, .invalid),
        Row(21009, .unavailable),
        Row(21009, retryable: false, .invalid),
        Row(21100, .unavailable),
        Row(21150, retryable: true, .unavailable),
        Row(21199, .unavailable),
        Row(21100, retryable: false, .invalid),
        Row(21199, retryable: false, .invalid),
        // Our configuration is wrong.
        Row(21000, .misconfigured),
        Row(21004, .misconfigured),
        Row(21004, retryable: true, .misconfigured),
        // Unknown codes never grant.
        Row(21001, .invalid),
        Row(21011, .invalid),
        Row(21099, .invalid),
        Row(21200, .invalid),
        Row(21999, .invalid),
        Row(1, .invalid),
        Row(-1, .invalid),
        // A failing HTTP status decides, whatever the body says.
        Row(0, http: 500, .unavailable),
        Row(0, http: 503, .unavailable),
        Row(21003, http: 502, .unavailable),
        Row(0, http: 429, .unavailable),
        Row(0, http: 408, .unavailable),
        Row(0, http: 404, .misconfigured),
        Row(0, http: 403, .misconfigured),
        Row(0, http: 301, .misconfigured),
    ]

    @Test(arguments: rows)
    func classify(_ row: Row) {
        #expect(AppleStatusPolicy.classify(status: row.status, isRetryable: row.isRetryable, httpStatus: row.httpStatus) == row.outcome)
    }

    @Test(arguments: [
        (nil, AppleOutcome.unavailable), // timeout or no connection
        (200, .unavailable), (204, .unavailable), (500, .unavailable), (502, .unavailable), (504, .unavailable),
        (599, .unavailable), (408, .unavailable), (429, .unavailable),
        (400, .misconfigured), (401, .misconfigured), (404, .misconfigured), (302, .misconfigured),
    ] as [(Int?, AppleOutcome)])
    func responseWithoutAUsableStatus(_ httpStatus: Int?, _ outcome: AppleOutcome) {
        #expect(AppleStatusPolicy.classifyFailedResponse(httpStatus: httpStatus) == outcome)
    }

    @Test(arguments: [
        (AppleOutcome.ok, 200 as Int?, AppleOutcome.ok, true),
        (.okSubscriptionExpired, 200, .okSubscriptionExpired, true),
        (.retryInSandbox, nil, .invalid, false),
        (.retryInProduction, nil, .misconfigured, false),
        (.retryOnceThenInvalid, nil, .invalid, false),
        (.invalid, 422, .invalid, false),
        (.unavailable, 503, .unavailable, false),
        (.misconfigured, 502, .misconfigured, false),
    ])
    func outcomeHTTPStatusAndFinalForm(_ outcome: AppleOutcome, _ httpStatus: Int?, _ final: AppleOutcome, _ valid: Bool) {
        #expect(outcome.httpStatus == httpStatus)
        #expect(outcome.withoutRetry == final)
        #expect(outcome.withoutRetry.httpStatus != nil)
        #expect(outcome.isValidReceipt == valid)
    }

    @Test func everyOutcomeIsCovered() {
        #expect(AppleOutcome.allCases.count == 8)
    }
}
