import Foundation
import Server

/// Purchases on demand, over HTTP (`depot simulator receipt`): the running store registers a purchase of a customer
/// of its own with its Server API and answers with an app receipt that holds it (base64 PKCS#7 signed with its PKI,
/// which its `verifyReceipt` accepts too) or with the purchase as a signed StoreKit 2 transaction; either way a
/// server validating through the Server API finds the purchase in Get Transaction History and the subscription
/// statuses.
///
/// `POST /simulator/v1/receipts` and `POST /simulator/v1/transactions` take
/// `{"productId": "...", "environment": "Production"|"Sandbox", "expiresInSeconds": N}` (the last two optional; an
/// expiry makes a subscription) and answer `201` with `{"receipt": "<base64>", "transactionId": "..."}` or
/// `{"signedTransaction": "<JWS>", "transactionId": "..."}`.
extension SimulatedAppStore {
    /// The path prefix of the minting endpoints.
    public static let mintingPrefix = "/simulator/v1/"

    func mint(path: String, body: [UInt8]) -> Response {
        guard path == "receipts" || path == "transactions" else {
            return Self.mintingError(404, "POST /simulator/v1/receipts or /simulator/v1/transactions.")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
              let productID = object["productId"] as? String, !productID.isEmpty else {
            return Self.mintingError(400, "The body must be {\"productId\": \"...\", \"environment\": \"Production\" or \"Sandbox\"}.")
        }
        let environmentText = (object["environment"] as? String) ?? Environment.production.rawValue
        guard let environment = Environment(rawValue: environmentText) else {
            return Self.mintingError(400, "`environment` must be Production or Sandbox.")
        }
        var expires: Date?
        if let seconds = object["expiresInSeconds"] {
            guard let number = seconds as? NSNumber, number.doubleValue > 0 else {
                return Self.mintingError(400, "`expiresInSeconds` must be a positive number.")
            }
            expires = serverAPI.now().addingTimeInterval(number.doubleValue)
        }
        // Random IDs: a simulator restarted on the same data directory does not hand out a server's known IDs again.
        let transactionID = String(Int64.random(in: 2_000_000_000_000_000...2_999_999_999_999_999))
        let purchase = serverAPI.purchase(productID, type: expires == nil ? .nonConsumable : .autoRenewable,
                                          customer: "simulator-" + UUID().uuidString.lowercased(), environment: environment,
                                          transactionID: transactionID, expiresDate: expires)
        if path == "receipts" {
            guard let receipt = try? serverAPI.appReceipt(transactionIDs: [transactionID], environment: environment) else {
                return Self.mintingError(500, "The receipt could not be signed.")
            }
            accept(receipt: receipt, environment: environment,
                   purchases: [Purchase(productID: productID, transactionID: transactionID, purchaseDate: purchase.purchaseDate,
                                        expiresDate: expires)])
            return Self.json(["receipt": receipt, "transactionId": transactionID], status: 201)
        }
        guard let signed = try? serverAPI.signedTransaction(transactionID) else {
            return Self.mintingError(500, "The transaction could not be signed.")
        }
        return Self.json(["signedTransaction": signed, "transactionId": transactionID], status: 201)
    }

    static func mintingError(_ status: Int, _ message: String) -> Response {
        json(["error": ["code": status == 404 ? "not_found" : "bad_request", "message": message]], status: status)
    }
}
