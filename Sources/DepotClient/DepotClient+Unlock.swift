public import Foundation
import DepotWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DepotClient {
    /// Validates a legacy app receipt (`Bundle.main.appStoreReceiptURL`'s bytes) on the server:
    /// `POST /v1/receipts {"receipt": <base64>, "account": ...}`.
    ///
    /// - Throws: ``DepotClientError``: `.retryLater` on `503` (keep the StoreKit transaction unfinished),
    ///   `.invalidReceipt` on `422`, `.badRequest` on `400`, `.server`, `.transport`...
    public func unlock(receipt: Data, account: String? = nil) async throws -> UnlockResult {
        try await unlock(receiptBase64: receipt.base64EncodedString(), account: account)
    }

    /// Like ``unlock(receipt:account:)`` with the receipt already in base64.
    public func unlock(receiptBase64: String, account: String? = nil) async throws -> UnlockResult {
        try await postReceipts(PurchaseRequest(receipt: receiptBase64, account: account))
    }

    /// Validates StoreKit 2 signed transactions (`Transaction.jwsRepresentation`) on the server:
    /// `POST /v1/receipts {"transactions": [...], "account": ...}`. Errors as ``unlock(receipt:account:)``.
    public func unlock(transactions: [String], account: String? = nil) async throws -> UnlockResult {
        try await postReceipts(PurchaseRequest(transactions: transactions, account: account))
    }

    private func postReceipts(_ body: PurchaseRequest) async throws -> UnlockResult {
        var request = try transport.request(WirePath.receipts.pattern, method: "POST")
        request.setValue("application/json; charset=utf-8", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(body)
        let answer = try await transport.send(request)
        guard answer.status == 200 else { throw transport.error(for: answer) }
        do {
            return try JSONDecoder().decode(UnlockResult.self, from: answer.body)
        } catch {
            throw DepotClientError.invalidResponse("unlock answer: \(error)")
        }
    }
}
