public import DepotCore
public import Foundation

/// Notification endpoints: Get Notification History, Request a Test Notification, Get Test
/// Notification Status, and Send Consumption Information.
extension ServerAPIClient {
    /// Get Notification History for one window of one environment (spec §6): `POST
    /// /inApps/v1/notifications/history` with `{"startDate": ms, "endDate": ms}`, then
    /// `?paginationToken=` while `hasMore`. `onPage` gets each page as it is read (the sync applies
    /// it); every `signedPayload` is verified like a posted V2 notification, and one that fails is
    /// reported in its item, not dropped. A payload whose check could not run, or a page that cannot
    /// be read, fails the whole window (the sync leaves its window where it was).
    public func forEachNotificationPage(from start: Date, to end: Date, environment: AppStoreEnvironment, now: Date,
                                        _ onPage: (NotificationHistoryPage) async -> Void) async -> Result<(pages: Int, isComplete: Bool), ServerAPIFailure> {
        guard environment == .production || (environment == .sandbox && configuration.allowSandbox) else {
            return .failure(.invalid(check: .environment, appleErrorCode: nil, reason: "notification history of \(environment) is not read"))
        }
        let body = Data("{\"startDate\":\(Self.milliseconds(start)),\"endDate\":\(Self.milliseconds(end))}".utf8)
        var request = Request(name: "notification_history", method: "POST", path: "/inApps/v1/notifications/history", body: body)
        var pages = 0
        while true {
            let answer: Data
            switch await send(request, to: environment, now: now) {
            case .success(let data): answer = data
            case .transactionNotFound:
                return .failure(.invalid(check: nil, appleErrorCode: ServerAPIStatusPolicy.transactionNotFoundCode,
                                         reason: "notification_history (\(environment)): transaction not found"))
            case .failure(let failure): return .failure(failure)
            }
            guard let page = ServerAPIWire.decode(ServerAPIWire.NotificationHistory.self, from: answer) else {
                return .failure(Self.unreadable("notification_history", environment, defaultRetryAfter: configuration.defaultRetryAfter))
            }
            pages += 1
            var items: [NotificationHistoryItem] = []
            for (index, entry) in (page.notificationHistory ?? []).enumerated() {
                guard let payload = entry.signedPayload else {
                    return .failure(.invalid(check: .format, appleErrorCode: nil,
                                             reason: "notification_history: notificationHistory[\(index)] of page \(pages) has no signedPayload"))
                }
                let result = verifier.verifyNotification(payload, now: now)
                if case .failure(.retryable(let detail)) = result {
                    return .failure(.unavailable(retryAfter: configuration.defaultRetryAfter, appleErrorCode: nil,
                                                 reason: "notification_history: notificationHistory[\(index)] of page \(pages): \(detail)"))
                }
                items.append(NotificationHistoryItem(signedPayload: payload, notification: result,
                                                     sendAttempts: Self.attempts(entry.sendAttempts)))
            }
            await onPage(NotificationHistoryPage(environment: environment, number: pages, items: items))
            guard page.hasMore == true else { return .success((pages, true)) }
            guard pages < configuration.maximumNotificationPages else { return .success((pages, false)) }
            guard let token = page.paginationToken, !token.isEmpty else {
                return .failure(.unavailable(retryAfter: configuration.defaultRetryAfter, appleErrorCode: nil,
                                             reason: "notification_history (\(environment)): hasMore without a paginationToken"))
            }
            request.query = [("paginationToken", token)]
        }
    }

    /// Get Notification History for one window, every page collected (see `forEachNotificationPage`).
    public func notificationHistory(from start: Date, to end: Date, environment: AppStoreEnvironment,
                                    now: Date) async -> Result<NotificationHistory, ServerAPIFailure> {
        var items: [NotificationHistoryItem] = []
        let result = await forEachNotificationPage(from: start, to: end, environment: environment, now: now) { page in
            items.append(contentsOf: page.items)
        }
        return result.map { NotificationHistory(environment: environment, items: items, pages: $0.pages, isComplete: $0.isComplete) }
    }

    /// Request a Test Notification (`POST /inApps/v1/notifications/test`): Apple sends a `TEST`
    /// notification to the app's notification URL. Returns the `testNotificationToken` to ask about
    /// it (a handle: it is never logged).
    public func requestTestNotification(environment: AppStoreEnvironment = .production,
                                        now: Date) async -> Result<String, ServerAPIFailure> {
        let request = Request(name: "test_notification", method: "POST", path: "/inApps/v1/notifications/test")
        switch await send(request, to: environment, now: now) {
        case .success(let body):
            guard let token = ServerAPIWire.decode(ServerAPIWire.TestNotification.self, from: body)?.testNotificationToken,
                  !token.isEmpty else {
                return .failure(Self.unreadable("test_notification", environment, defaultRetryAfter: configuration.defaultRetryAfter))
            }
            return .success(token)
        case .transactionNotFound:
            return .failure(.invalid(check: nil, appleErrorCode: ServerAPIStatusPolicy.transactionNotFoundCode, reason: "test_notification: not found"))
        case .failure(let failure):
            return .failure(failure)
        }
    }

    /// Get Test Notification Status (`GET /inApps/v1/notifications/test/{testNotificationToken}`):
    /// the `TEST` notification, verified, and Apple's attempts to deliver it.
    public func testNotificationStatus(token: String, environment: AppStoreEnvironment = .production,
                                       now: Date) async -> Result<TestNotificationStatus, ServerAPIFailure> {
        let segment: String
        switch Self.pathSegment(token, what: "test notification token") {
        case .success(let value): segment = value
        case .failure(let failure): return .failure(failure)
        }
        let request = Request(name: "test_notification_status", path: "/inApps/v1/notifications/test/" + segment)
        switch await send(request, to: environment, now: now) {
        case .success(let body):
            guard let status = ServerAPIWire.decode(ServerAPIWire.TestNotificationStatus.self, from: body),
                  let payload = status.signedPayload else {
                return .failure(Self.unreadable("test_notification_status", environment, defaultRetryAfter: configuration.defaultRetryAfter))
            }
            switch verifier.verifyNotification(payload, now: now) {
            case .success(let notification):
                return .success(TestNotificationStatus(notification: notification, sendAttempts: Self.attempts(status.sendAttempts)))
            case .failure(let failure):
                return .failure(Self.itemFailure(failure, field: "test_notification_status: signedPayload",
                                                 retryAfter: configuration.defaultRetryAfter))
            }
        case .transactionNotFound:
            return .failure(.invalid(check: nil, appleErrorCode: ServerAPIStatusPolicy.transactionNotFoundCode,
                                     reason: "test_notification_status: not found"))
        case .failure(let failure):
            return .failure(failure)
        }
    }

    /// Send Consumption Information (`PUT /inApps/v2/transactions/consumption/{transactionId}`) for a
    /// `CONSUMPTION_REQUEST` about `transactionID` in `environment` (spec §7). Apple answers `202`.
    public func sendConsumptionInformation(_ information: ConsumptionInformation, transactionID: String,
                                           environment: AppStoreEnvironment, now: Date) async -> Result<Void, ServerAPIFailure> {
        let segment: String
        switch Self.pathSegment(transactionID, what: "transaction ID") {
        case .success(let value): segment = value
        case .failure(let failure): return .failure(failure)
        }
        let request = Request(name: "consumption", method: "PUT", path: "/inApps/v2/transactions/consumption/" + segment,
                              body: Data(information.json.utf8))
        switch await send(request, to: environment, now: now) {
        case .success: return .success(())
        case .transactionNotFound:
            return .failure(.invalid(check: nil, appleErrorCode: ServerAPIStatusPolicy.transactionNotFoundCode,
                                     reason: "consumption (\(environment)): Apple does not know the transaction"))
        case .failure(let failure): return .failure(failure)
        }
    }

    static func attempts(_ wire: [ServerAPIWire.SendAttempt]?) -> [SendAttempt] {
        (wire ?? []).compactMap { attempt in
            guard let date = attempt.attemptDate, let result = attempt.sendAttemptResult else { return nil }
            return SendAttempt(date: Date(appStoreMilliseconds: date), result: SendAttemptResult(rawValue: result))
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
