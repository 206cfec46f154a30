import Foundation
import HTTP
import Server
import Synchronization

/// The simulated Server API's answers: routing, Apple's token check, scripted failures, and each
/// endpoint's body.
extension SimulatedServerAPI {
    /// Answers one request whose path is below `/inApps` (after the environment's prefix).
    func answer(method: HTTPMethod, path: String, query: RequestTarget, environment: Environment,
                authorization: String?, body: [UInt8]) async -> Response {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let (endpoint, parameter, expected) = Self.route(segments) else {
            return Response(status: 404, headers: ["Content-Type": "text/plain"], body: .bytes(Array("Not Found\n".utf8)))
        }
        guard method == expected else {
            return Response(status: 405, headers: ["Allow": expected.description], body: .empty)
        }
        let time = now()
        let keys = state.withLock { s -> [String: SimulatedAPIKey] in
            s.calls["\(endpoint.rawValue) \(environment.rawValue)", default: 0] += 1
            return s.keys
        }
        if let refusal = APITokenCheck.failure(authorization: authorization, keys: keys, bundleID: bundleID, now: time,
                                               accepted: acceptedTokens) {
            state.withLock { $0.authenticationFailures.append(refusal) }
            return Response(status: 401, headers: ["Content-Type": "text/plain"], body: .bytes(Array("Unauthenticated\n".utf8)))
        }
        var delay = responseDelay
        switch takeFailure(for: endpoint) {
        case .delay(let seconds)?:
            delay = max(delay, seconds)
        case let failure?:
            await pause(delay)
            return Self.response(for: failure)
        case nil:
            break
        }
        await pause(delay)
        switch endpoint {
        case .transactionHistory: return history(of: parameter, revision: query.queryValue("revision"), environment: environment)
        case .transactionInfo: return transactionInfo(parameter, environment: environment)
        case .subscriptionStatuses: return statuses(of: parameter, environment: environment, now: time)
        case .notificationHistory: return notificationHistory(body: body, token: query.queryValue("paginationToken"),
                                                              environment: environment, now: time)
        case .testNotification: return testNotification(environment: environment)
        case .testNotificationStatus: return testNotificationStatus(parameter, environment: environment)
        case .consumption: return consumption(parameter, body: body, environment: environment)
        }
    }

    /// `(endpoint, path parameter, method)` for `/inApps/...` segments (the first is empty).
    static func route(_ s: [String]) -> (SimulatedEndpoint, String, HTTPMethod)? {
        guard s.count >= 4, s[0].isEmpty, s[1] == "inApps" else { return nil }
        switch (s[2], s[3], s.count) {
        case ("v2", "history", 5) where !s[4].isEmpty: return (.transactionHistory, s[4], .get)
        case ("v1", "transactions", 5) where !s[4].isEmpty: return (.transactionInfo, s[4], .get)
        case ("v1", "subscriptions", 5) where !s[4].isEmpty: return (.subscriptionStatuses, s[4], .get)
        case ("v1", "notifications", 5) where s[4] == "history": return (.notificationHistory, "", .post)
        case ("v1", "notifications", 5) where s[4] == "test": return (.testNotification, "", .post)
        case ("v1", "notifications", 6) where s[4] == "test" && !s[5].isEmpty: return (.testNotificationStatus, s[5], .get)
        case ("v2", "transactions", 6) where s[4] == "consumption" && !s[5].isEmpty: return (.consumption, s[5], .put)
        default: return nil
        }
    }

    /// The answer a failure gives (a `delay` gives the real answer late: not here).
    private static func response(for failure: SimulatedFailure) -> Response {
        switch failure {
        case .error(let status, let code):
            return error(status, code, "Simulated failure.")
        case .httpStatus(let status):
            return Response(status: status, headers: ["Content-Type": "text/html"], body: .bytes(Array("<html>error</html>".utf8)))
        case .rateLimited(let retryAfter):
            var response = error(429, 4_290_000, "Rate limit exceeded.")
            response.headers.append("Retry-After", String(retryAfter))
            return response
        case .withRetryAfter(let retryAfter, let inner):
            var response = response(for: inner)
            response.headers.append("Retry-After", String(retryAfter))
            return response
        case .delay:
            preconditionFailure("a delay answers late, not with a failure")
        }
    }

    private func takeFailure(for endpoint: SimulatedEndpoint) -> SimulatedFailure? {
        state.withLock { s in
            guard let index = s.failures.firstIndex(where: { $0.remaining > 0 && ($0.endpoint == nil || $0.endpoint == endpoint) }) else {
                return nil
            }
            s.failures[index].remaining -= 1
            let failure = s.failures[index].failure
            if s.failures[index].remaining == 0 { s.failures.remove(at: index) }
            return failure
        }
    }

    // MARK: - Endpoints

    private func history(of transactionID: String, revision: String?, environment: Environment) -> Response {
        let (found, pageSize) = state.withLock { s in
            (Self.customerTransactions(of: transactionID, environment: environment, in: s), s.historyPageSize)
        }
        guard let all = found else { return Self.transactionNotFound() }
        let start: Int
        if let revision {
            guard revision.hasPrefix("rev_"), let offset = Int(revision.dropFirst(4)), offset >= 0, offset <= all.count else {
                return Self.error(400, 4_000_005, "Invalid request revision.")
            }
            start = offset
        } else {
            start = 0
        }
        let sorted = all.enumerated().sorted { ($0.element.purchaseDate, $0.offset) < ($1.element.purchaseDate, $1.offset) }.map(\.element)
        let page = Array(sorted[start..<min(sorted.count, start + pageSize)])
        let end = start + page.count
        var answer = appMembers(environment: environment)
        answer.append(.init("signedTransactions", .array(page.map { .string(signed($0)) })))
        answer.append(.init("revision", .string("rev_\(end)")))
        answer.append(.init("hasMore", .bool(end < sorted.count)))
        return Self.json(.object(answer))
    }

    private func transactionInfo(_ transactionID: String, environment: Environment) -> Response {
        guard let transaction = state.withLock({ s in s.transactions.first { $0.environment == environment && $0.transactionID == transactionID } }) else {
            return Self.transactionNotFound()
        }
        return Self.json(.object([.init("signedTransactionInfo", .string(signed(transaction)))]))
    }

    private func statuses(of transactionID: String, environment: Environment, now: Date) -> Response {
        let all = state.withLock { s -> [SimulatedTransaction]? in
            Self.customerTransactions(of: transactionID, environment: environment, in: s)?.filter { $0.type == .autoRenewable }
        }
        guard let all else { return Self.transactionNotFound() }
        var latest: [String: SimulatedTransaction] = [:]
        for transaction in all where (latest[transaction.originalTransactionID]?.purchaseDate ?? .distantPast) <= transaction.purchaseDate {
            latest[transaction.originalTransactionID] = transaction
        }
        var groups: [String: [SimulatedJSON]] = [:]
        for transaction in latest.values.sorted(by: { $0.originalTransactionID < $1.originalTransactionID }) {
            let status = transaction.revocationDate != nil ? 5 : ((transaction.expiresDate ?? now) > now ? 1 : 2)
            var renewal: [SimulatedJSON.Member] = [
                .init("originalTransactionId", .string(transaction.originalTransactionID)), .init("productId", .string(transaction.productID)),
                .init("autoRenewProductId", .string(transaction.productID)), .init("autoRenewStatus", .integer(status == 1 ? 1 : 0)),
                .init("signedDate", .integer(SimulatedTransaction.milliseconds(now))), .init("environment", .string(environment.rawValue)),
                .init("recentSubscriptionStartDate", .integer(SimulatedTransaction.milliseconds(transaction.originalPurchaseDate))),
            ]
            if let expires = transaction.expiresDate {
                renewal.append(.init("renewalDate", .integer(SimulatedTransaction.milliseconds(expires))))
            }
            groups[transaction.subscriptionGroupIdentifier ?? "group-1", default: []].append(.object([
                .init("status", .integer(Int64(status))), .init("originalTransactionId", .string(transaction.originalTransactionID)),
                .init("signedTransactionInfo", .string(signed(transaction))),
                .init("signedRenewalInfo", .string((try? signer.sign(.object(renewal))) ?? "")),
            ]))
        }
        var answer = appMembers(environment: environment)
        answer.append(.init("data", .array(groups.keys.sorted().map { group in
            .object([.init("subscriptionGroupIdentifier", .string(group)), .init("lastTransactions", .array(groups[group]!))])
        })))
        return Self.json(.object(answer))
    }

    private func notificationHistory(body: [UInt8], token: String?, environment: Environment, now: Date) -> Response {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
              let start = (object["startDate"] as? NSNumber)?.int64Value, let end = (object["endDate"] as? NSNumber)?.int64Value else {
            return Self.error(400, 4_000_000, "Invalid request.")
        }
        let nowMilliseconds = SimulatedTransaction.milliseconds(now)
        guard start >= nowMilliseconds - 180 * 86_400_000 else { return Self.error(400, 4_000_015, "Invalid request. The start date is earlier than 180 days in the past.") }
        guard end <= nowMilliseconds + 60_000 else { return Self.error(400, 4_000_016, "Invalid request. The end date is in the future.") }
        guard start < end else { return Self.error(400, 4_000_013, "Invalid request. The end date precedes the start date or the dates are the same.") }
        let (matching, pageSize) = state.withLock { s in
            (s.notifications.filter {
                let date = SimulatedTransaction.milliseconds($0.date)
                return $0.environment == environment && date >= start && date < end
            }, s.notificationPageSize)
        }
        let offset: Int
        if let token {
            let parts = token.split(separator: "_")
            guard parts.count == 3, parts[0] == "pt", Int64(parts[1]) == start, let value = Int(parts[2]), value >= 0, value <= matching.count else {
                return Self.error(400, 4_000_014, "Invalid request. The pagination token is invalid.")
            }
            offset = value
        } else {
            offset = 0
        }
        let page = matching[offset..<min(matching.count, offset + pageSize)]
        let next = offset + page.count
        var answer: [SimulatedJSON.Member] = [
            .init("notificationHistory", .array(page.map { .object([.init("signedPayload", .string($0.signedPayload)),
                                                                    .init("sendAttempts", Self.sendAttempts($0))]) })),
            .init("hasMore", .bool(next < matching.count)),
        ]
        if next < matching.count { answer.append(.init("paginationToken", .string("pt_\(start)_\(next)"))) }
        return Self.json(.object(answer))
    }

    private func testNotification(environment: Environment) -> Response {
        guard notificationURL != nil else {
            return Self.error(404, 4_040_007, "No App Store Server Notification URL found for provided app. Check that a URL is configured in App Store Connect for this environment.")
        }
        guard let token = startTestNotification(environment: environment) else { return Self.error(500, 5_000_000, "An unknown error occurred.") }
        return Self.json(.object([.init("testNotificationToken", .string(token))]))
    }

    private func testNotificationStatus(_ token: String, environment: Environment) -> Response {
        guard let notification = state.withLock({ s in s.notifications.first { $0.testToken == token && $0.environment == environment } }) else {
            return Self.error(404, 4_040_008, "Either the test notification token is expired or the notification and status are not yet available.")
        }
        return Self.json(.object([.init("signedPayload", .string(notification.signedPayload)), .init("sendAttempts", Self.sendAttempts(notification))]))
    }

    private func consumption(_ transactionID: String, body: [UInt8], environment: Environment) -> Response {
        let known = state.withLock { s -> Bool in
            guard s.transactions.contains(where: { $0.environment == environment && $0.transactionID == transactionID }) else { return false }
            s.consumption.append(RecordedConsumption(transactionID: transactionID, environment: environment, body: body))
            return true
        }
        guard known else { return Self.transactionNotFound() }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any], object["customerConsented"] as? Bool == true,
              object["deliveryStatus"] is String else {
            return Self.error(400, 4_000_035, "Invalid request. The customer consented field is invalid or doesn't indicate that the customer consented.")
        }
        return Response(status: 202, body: .empty)
    }

    // MARK: - Helpers

    /// `bundleId`, `environment` and, in Production, `appAppleId` of an answer.
    private func appMembers(environment: Environment) -> [SimulatedJSON.Member] {
        var members: [SimulatedJSON.Member] = [.init("bundleId", .string(answerBundleID ?? bundleID)),
                                               .init("environment", .string(environment.rawValue))]
        if environment == .production, !omitsAppAppleID { members.append(.init("appAppleId", .integer(appAppleID))) }
        return members
    }

    /// The `sendAttempts` array of a recorded notification.
    private static func sendAttempts(_ notification: RecordedNotification) -> SimulatedJSON {
        .array(notification.sendAttempts.map {
            .object([.init("attemptDate", .integer(SimulatedTransaction.milliseconds($0.date))), .init("sendAttemptResult", .string($0.result))])
        })
    }

    /// Waits `seconds`, or less once the store stops.
    func pause(_ seconds: Double) async {
        guard seconds > 0 else { return }
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(seconds * 1000))
        while clock.now < deadline, !stopping.load(ordering: .relaxed) {
            try? await Task.sleep(for: min(.milliseconds(50), deadline - clock.now))
        }
    }

    static func transactionNotFound() -> Response {
        error(404, 4_040_010, "Transaction id not found.")
    }

    static func error(_ status: Int, _ code: Int, _ message: String) -> Response {
        json(.object([.init("errorCode", .integer(Int64(code))), .init("errorMessage", .string(message))]), status: status)
    }

    static func json(_ document: SimulatedJSON, status: Int = 200) -> Response {
        Response(status: status, headers: ["Content-Type": "application/json"], body: .bytes(document.bytes))
    }
}
