public import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The simulated store's notifications: each one is signed when it happens, kept in the
/// notification history, and POSTed to `notificationURL` when one is set (the attempt is recorded,
/// as Apple records its send attempts).
extension SimulatedServerAPI {
    /// Records (and delivers) a V2 notification about `transaction`; returns its UUID.
    @discardableResult
    func notify(_ type: String, subtype: String? = nil, about transaction: SimulatedTransaction, at date: Date) -> String {
        let uuid = UUID().uuidString.lowercased()
        var data = appData(environment: transaction.environment)
        data["signedTransactionInfo"] = try? signer.sign(transaction.payload(bundleID: bundleID, signedDate: date))
        if transaction.type == .autoRenewable {
            data["status"] = transaction.revocationDate != nil ? 5 : ((transaction.expiresDate ?? date) > date ? 1 : 2)
        }
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": SimulatedTransaction.milliseconds(date), "data": data]
        payload["subtype"] = subtype
        guard let signed = try? signer.sign(payload: payload) else { return uuid }
        record(RecordedNotification(uuid: uuid, type: type, environment: transaction.environment, date: date, signedPayload: signed))
        return uuid
    }

    /// Records a notification exactly as given (e.g. a tampered one, or one signed by another PKI)
    /// at `date` in `environment`'s history; it is delivered like the others.
    public func recordNotification(signedPayload: String, environment: Environment = .production, at date: Date? = nil) {
        record(RecordedNotification(uuid: UUID().uuidString.lowercased(), type: "RAW", environment: environment,
                                    date: date ?? now(), signedPayload: signedPayload))
    }

    /// A signed `TEST` notification for `environment`, recorded and delivered; its test token.
    func startTestNotification(environment: Environment) -> String? {
        let date = now()
        let uuid = UUID().uuidString.lowercased()
        let payload: [String: Any] = ["notificationType": "TEST", "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": SimulatedTransaction.milliseconds(date), "data": appData(environment: environment)]
        guard let signed = try? signer.sign(payload: payload) else { return nil }
        let token = uuid + "_" + String(SimulatedTransaction.milliseconds(date))
        record(RecordedNotification(uuid: uuid, type: "TEST", environment: environment, date: date, signedPayload: signed, testToken: token))
        return token
    }

    /// The `data` object of a notification: the app, its environment, and in Production its Apple ID.
    func appData(environment: Environment) -> [String: Any] {
        var data: [String: Any] = ["bundleId": bundleID, "bundleVersion": "1", "environment": environment.rawValue]
        if environment == .production { data["appAppleId"] = appAppleID }
        return data
    }

    private func record(_ notification: RecordedNotification) {
        let url = state.withLock { s -> URL? in
            s.notifications.append(notification)
            return s.notificationURL
        }
        guard let url else { return }
        let task = Task { [self] in await deliver(notification.signedPayload, uuid: notification.uuid, to: url) }
        deliveries.withLock { $0.append(task) }
    }

    /// POSTs `{"signedPayload": …}` and records how it went.
    private func deliver(_ signedPayload: String, uuid: String, to url: URL) async {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("{\"signedPayload\":\"\(signedPayload)\"}".utf8)
        let result: String
        do {
            let (_, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            result = (200..<300).contains(status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        } catch {
            result = (error as? URLError)?.code == .timedOut ? "TIMED_OUT" : "NO_RESPONSE"
        }
        let date = now()
        state.withLock { s in
            guard let index = s.notifications.firstIndex(where: { $0.uuid == uuid }) else { return }
            s.notifications[index].sendAttempts.append((date, result))
        }
    }
}
