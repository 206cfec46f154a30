import Foundation
import Server

/// Purchases on demand, over HTTP (`depot simulator receipt`): the running store issues a receipt it will accept,
/// or signs a StoreKit 2 transaction with its PKI.
///
/// `POST /simulator/v1/receipts` and `POST /simulator/v1/transactions` take
/// `{"productId": "...", "environment": "Production"|"Sandbox", "expiresInSeconds": N}` (the last two optional; an
/// expiry makes a subscription) and answer `201` with `{"receipt": "<base64>", "transactionId": "..."}` or
/// `{"signedTransaction": "<JWS>", "transactionId": "..."}`.
extension SimulatedAppStore {
    /// The path prefix of the minting endpoints.
    public static let mintingPrefix = "/simulator/v1/"

    func mint(path: String, body: [UInt8]) -> Response {
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
            expires = Date().addingTimeInterval(number.doubleValue)
        }
        let transactionID = String(Int64.random(in: 2_000_000_000_000_000...2_999_999_999_999_999))
        switch path {
        case "receipts":
            let receipt = issueReceipt([Purchase(productID: productID, transactionID: transactionID, expiresDate: expires)],
                                       environment: environment)
            return Self.json(["receipt": receipt, "transactionId": transactionID], status: 201)
        case "transactions":
            let now = Date()
            let transaction = TransactionSigner.Transaction(
                transactionId: transactionID, bundleId: bundleID, productId: productID, purchaseDate: now, signedDate: now,
                type: expires == nil ? "Non-Consumable" : "Auto-Renewable Subscription", environment: environment.rawValue,
                expiresDate: expires)
            guard let signed = try? serverAPI.signer.signedTransaction(transaction) else {
                return Self.mintingError(500, "The transaction could not be signed.")
            }
            return Self.json(["signedTransaction": signed, "transactionId": transactionID], status: 201)
        default:
            return Self.mintingError(404, "POST /simulator/v1/receipts or /simulator/v1/transactions.")
        }
    }

    static func mintingError(_ status: Int, _ message: String) -> Response {
        json(["error": ["code": status == 404 ? "not_found" : "bad_request", "message": message]], status: status)
    }
}
