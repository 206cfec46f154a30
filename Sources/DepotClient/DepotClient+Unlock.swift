public import Foundation
import DepotWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DepotClient {
    /// Validates a legacy app receipt on the server: `POST /v1/receipts {"receipt": <base64>, "account": ...}`.
    ///
    /// `receipt` may be the receipt's bytes (`Data(contentsOf: Bundle.main.appStoreReceiptURL!)`) or base64 text
    /// of them (what a server or `depot simulator receipt` hands around): text made only of base64 characters and
    /// line breaks is sent as it is, anything else is encoded first. (A binary receipt is DER, which starts with
    /// byte 0x30 followed by a length byte of 0x80 or more, so the two never look alike.)
    ///
    /// - Throws: ``DepotClientError``: `.retryLater` on `503` (keep the StoreKit transaction unfinished),
    ///   `.invalidReceipt` on `422`, `.badRequest` on `400`, `.server`, `.transport`...
    public func unlock(receipt: Data, account: String? = nil) async throws -> UnlockResult {
        try await postReceipts(PurchaseRequest(receipt: Self.base64Receipt(receipt), account: account))
    }

    /// Like ``unlock(receipt:account:)`` with the receipt as base64 text (``unlock(receipt:account:)`` takes it
    /// too, as `Data(text.utf8)`).
    public func unlock(receiptBase64: String, account: String? = nil) async throws -> UnlockResult {
        try await postReceipts(PurchaseRequest(receipt: receiptBase64, account: account))
    }

    /// The base64 text to send for `receipt`: itself (without line breaks and surrounding spaces) when it is
    /// base64 text, else its bytes encoded.
    package static func base64Receipt(_ receipt: Data) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(receipt.count)
        for byte in receipt {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
                text.append(byte)
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: " "), UInt8(ascii: "\t"):
                continue
            default:
                return receipt.base64EncodedString()
            }
        }
        guard !text.isEmpty, text.count % 4 == 0, Data(base64Encoded: Data(text)) != nil else { return receipt.base64EncodedString() }
        return String(decoding: text, as: UTF8.self)
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
