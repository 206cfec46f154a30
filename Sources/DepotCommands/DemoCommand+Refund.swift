import AppStoreSimulator
import DepotWire
import Foundation

extension DemoCommand {
    /// Step 6: the customer asks Apple for a refund of the pack just downloaded; Apple's `CONSUMPTION_REQUEST`
    /// reaches the server, which answers it from its delivery record (spec app-store-server-api §7).
    /// Returns the answer's `deliveryStatus`.
    @discardableResult
    static func showRefundRequest(api: SimulatedServerAPI, server: String, transactionID: String) async throws -> String {
        step(6, "The customer asks Apple for a refund; Apple asks Depot what was delivered (CONSUMPTION_REQUEST)")
        // Apple posts this notification to the server (the refund later in the story finds it stopped).
        api.notificationURL = URL(string: server + WirePath.notifications.pattern)
        defer { api.notificationURL = nil }
        guard api.requestRefund(transactionID) != nil else {
            throw Failure(description: "the simulated App Store does not know transaction \(transactionID)")
        }
        await api.waitForDeliveries()
        say("   Apple (simulated) posted CONSUMPTION_REQUEST for transaction \(transactionID); Depot acknowledged it and queued its answer")
        // Depot answers a few seconds later, once every instance's delivery record is written.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        var answer = api.consumptionRequests.first { $0.transactionID == transactionID }
        while answer == nil, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            answer = api.consumptionRequests.first { $0.transactionID == transactionID }
        }
        guard let answer,
              let fields = (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any],
              let status = fields["deliveryStatus"] as? String else {
            throw Failure(description: "Depot did not answer the refund request within 60 s")
        }
        let share = (fields["consumptionPercentage"] as? Int).map { "\($0) milliunits of the pack's bytes" } ?? "no percentage"
        say("   Send Consumption Information arrived at Apple: deliveryStatus \(status), consumptionPercentage \(share), "
            + "refundPreference \((fields["refundPreference"] as? String) ?? "none")")
        say("   (every chunk of the pack was sent to this purchase, so Depot tells Apple the content was delivered)")
        return status
    }
}
