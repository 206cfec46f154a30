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
        if let refusal = APITokenCheck.failure(authorization: authorization, keys: keys, bundleID: bundleID, now: time) {
            state.withLock { $0.authenticationFailures.append(refusal) }
            return Response(status: 401, headers: ["Content-Type": "text/plain"], body: .bytes(Array("Unauthenticated\n".utf8)))
        }
        var delay = responseDelay
        switch takeFailure(for: endpoint) {
        case .error(let status, let code)?:
            await pause(delay)
            return Self.error(status, code, "Simulated failure.")
        case .httpStatus(let status)?:
            await pause(delay)
            return Response(status: status, headers: ["Content-Type": "text/html"], body: .bytes(Array("<html>error</html>".utf8)))
        case .rateLimited(let retryAfter)?:
            await pause(delay)
            var response = Self.error(429, 4_290_000, "Rate limit exceeded.")
            response.headers.append("Retry-After", String(retryAfter))
            return response
        case .delay(let seconds)?:
            delay = max(delay, seconds)
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
        var answer = appObject(environment: environment)
        answer["signedTransactions"] = page.map(signed)
        answer["revision"] = "rev_\(end)"
        answer["hasMore"] = end < sorted.count
        return Self.json(answer)
    }

    private func transactionInfo(_ transactionID: String, environment: Environment) -> Response {
        guard let transaction = state.withLock({ s in s.transactions.first { $0.environment == environment && $0.transactionID == transactionID } }) else {
            return Self.transactionNotFound()
        }
        return Self.json(["signedTransactionInfo": signed(transaction)])
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
        var groups: [String: [[String: Any]]] = [:]
        for transaction in latest.values.sorted(by: { $0.originalTransactionID < $1.originalTransactionID }) {
            let status = transaction.revocationDate != nil ? 5 : ((transaction.expiresDate ?? now) > now ? 1 : 2)
            var renewal: [String: Any] = [
                "originalTransactionId": transaction.originalTransactionID, "productId": transaction.productID,
                "autoRenewProductId": transaction.productID, "autoRenewStatus": status == 1 ? 1 : 0,
                "signedDate": SimulatedTransaction.milliseconds(now), "environment": environment.rawValue,
                "recentSubscriptionStartDate": SimulatedTransaction.milliseconds(transaction.originalPurchaseDate),
            ]
            renewal["renewalDate"] = transaction.expiresDate.map(SimulatedTransaction.milliseconds)
            groups[transaction.subscriptionGroupIdentifier ?? "group-1", default: []].append([
                "status": status, "originalTransactionId": transaction.originalTransactionID,
                "signedTransactionInfo": signed(transaction), "signedRenewalInfo": (try? signer.sign(payload: renewal)) ?? "",
            ])
        }
        var answer = appObject(environment: environment)
        answer["data"] = groups.keys.sorted().map { ["subscriptionGroupIdentifier": $0, "lastTransactions": groups[$0]!] as [String: Any] }
        return Self.json(answer)
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
        var answer: [String: Any] = ["notificationHistory": page.map { notification in
            ["signedPayload": notification.signedPayload,
             "sendAttempts": notification.sendAttempts.map { ["attemptDate": SimulatedTransaction.milliseconds($0.date), "sendAttemptResult": $0.result] }]
                as [String: Any]
        }, "hasMore": next < matching.count]
        if next < matching.count { answer["paginationToken"] = "pt_\(start)_\(next)" }
        return Self.json(answer)
    }

    private func testNotification(environment: Environment) -> Response {
        guard notificationURL != nil else {
            return Self.error(404, 4_040_007, "No App Store Server Notification URL found for provided app. Check that a URL is configured in App Store Connect for this environment.")
        }
        guard let token = startTestNotification(environment: environment) else { return Self.error(500, 5_000_000, "An unknown error occurred.") }
        return Self.json(["testNotificationToken": token])
    }

    private func testNotificationStatus(_ token: String, environment: Environment) -> Response {
        guard let notification = state.withLock({ s in s.notifications.first { $0.testToken == token && $0.environment == environment } }) else {
            return Self.error(404, 4_040_008, "Either the test notification token is expired or the notification and status are not yet available.")
        }
        return Self.json(["signedPayload": notification.signedPayload,
                          "sendAttempts": notification.sendAttempts.map { ["attemptDate": SimulatedTransaction.milliseconds($0.date), "sendAttemptResult": $0.result] }])
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

    /// The signed form of `transaction` in answers (a replacement when a test set one).
    private func signed(_ transaction: SimulatedTransaction) -> String {
        if let override = state.withLock({ $0.signedOverrides[transaction.transactionID] }) { return override }
        return (try? signer.sign(payload: transaction.payload(bundleID: bundleID, signedDate: now()))) ?? ""
    }

    /// `bundleId`, `environment` and, in Production, `appAppleId` of an answer.
    private func appObject(environment: Environment) -> [String: Any] {
        var object: [String: Any] = ["bundleId": answerBundleID ?? bundleID, "environment": environment.rawValue]
        if environment == .production { object["appAppleId"] = appAppleID }
        return object
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
        json(["errorCode": code, "errorMessage": message], status: status)
    }

    static func json(_ object: [String: Any], status: Int = 200) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Response(status: status, headers: ["Content-Type": "application/json"], body: .bytes([UInt8](data)))
    }
}
