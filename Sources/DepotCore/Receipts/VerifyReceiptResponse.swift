public import Foundation

/// Apple's legacy `verifyReceipt` answer, read from the raw response bytes.
///
/// Read leniently where Apple is inconsistent (spec §4.2: "dates and numbers arrive as strings; accept
/// numbers too"): every numeric field may be a JSON number or a string; `in_app`, `latest_receipt_info` and
/// `latest_expired_receipt_info` may be arrays or single objects (iOS 6 style); an iOS 6-style `receipt`
/// (with `bid`, no `in_app`) is itself the purchase. Unknown fields are ignored. A field that is present
/// but unreadable, or a required one that is missing, is a `ReceiptParseError`, never a crash.
public struct VerifyReceiptResponse: Sendable, Equatable {
    /// `status`: 0 for a valid receipt, otherwise Apple's 21xxx code (see `AppleStatusPolicy`).
    public var status: Int
    /// `environment` (`Production`, `Sandbox`), absent in iOS 6-style and most error responses.
    public var environment: String?
    /// `is-retryable`, when Apple sent it.
    public var isRetryable: Bool?
    /// Whether the response carries a `receipt` object at all.
    public var hasReceipt: Bool
    /// `receipt.bundle_id` (iOS 6 style: `receipt.bid`).
    public var bundleID: String?
    /// `receipt.in_app`, or the iOS 6-style `receipt` itself, in response order.
    public var inApp: [ReceiptPurchase]
    /// `latest_receipt_info`, in response order.
    public var latestReceiptInfo: [ReceiptPurchase]
    /// `latest_expired_receipt_info` (iOS 6 style, with status 21006).
    public var latestExpiredReceiptInfo: [ReceiptPurchase]
    /// `latest_receipt`, the base64 receipt to keep for later renewals.
    public var latestReceipt: String?

    /// Every purchase once, by `transaction_id`, in order of first appearance. When a transaction appears
    /// in several lists, `latest_receipt_info` wins over `latest_expired_receipt_info`, which wins over
    /// `in_app` (the latest lists are Apple's newest word, e.g. on a cancellation).
    public var purchases: [ReceiptPurchase] {
        var order: [String] = []
        var byID: [String: ReceiptPurchase] = [:]
        for purchase in inApp + latestExpiredReceiptInfo + latestReceiptInfo {
            if byID.updateValue(purchase, forKey: purchase.transactionID) == nil { order.append(purchase.transactionID) }
        }
        return order.compactMap { byID[$0] }
    }

    /// Creates a response from its parts.
    public init(
        status: Int, environment: String? = nil, isRetryable: Bool? = nil, hasReceipt: Bool = false,
        bundleID: String? = nil, inApp: [ReceiptPurchase] = [], latestReceiptInfo: [ReceiptPurchase] = [],
        latestExpiredReceiptInfo: [ReceiptPurchase] = [], latestReceipt: String? = nil
    ) {
        self.status = status
        self.environment = environment
        self.isRetryable = isRetryable
        self.hasReceipt = hasReceipt
        self.bundleID = bundleID
        self.inApp = inApp
        self.latestReceiptInfo = latestReceiptInfo
        self.latestExpiredReceiptInfo = latestExpiredReceiptInfo
        self.latestReceipt = latestReceipt
    }

    /// Reads a response body.
    public init(json data: Data) throws(ReceiptParseError) {
        let top = try ReceiptJSONObject(parsing: data)
        guard let status = try top.integer("status") else { throw .missingField("status") }
        guard let intStatus = Int(exactly: status) else { throw .invalidField("status", expected: "an integer") }
        self.init(status: intStatus)
        environment = try top.string("environment")
        isRetryable = try top.bool("is-retryable")
        latestReceipt = try top.string("latest_receipt")

        if let receipt = try top.object("receipt") {
            hasReceipt = true
            bundleID = try receipt.string("bundle_id")
            if bundleID == nil { bundleID = try receipt.string("bid") }
            if let inApp = try receipt.objects("in_app") {
                self.inApp = try Self.purchases(inApp)
            } else if receipt.has("product_id") {
                // iOS 6 style: the receipt describes one purchase.
                self.inApp = [try Self.purchase(receipt)]
            }
        }
        latestExpiredReceiptInfo = try Self.purchases(top.objects("latest_expired_receipt_info") ?? [])
        latestReceiptInfo = try Self.purchases(top.objects("latest_receipt_info") ?? [])
    }

    private static func purchases(_ objects: [ReceiptJSONObject]) throws(ReceiptParseError) -> [ReceiptPurchase] {
        var purchases: [ReceiptPurchase] = []
        purchases.reserveCapacity(objects.count)
        for object in objects { purchases.append(try purchase(object)) }
        return purchases
    }

    private static func purchase(_ object: ReceiptJSONObject) throws(ReceiptParseError) -> ReceiptPurchase {
        guard let productID = try object.string("product_id") else { throw .missingField(object.path(of: "product_id")) }
        guard let transactionID = try object.identifier("transaction_id") else {
            throw .missingField(object.path(of: "transaction_id"))
        }
        guard let originalTransactionID = try object.identifier("original_transaction_id") else {
            throw .missingField(object.path(of: "original_transaction_id"))
        }
        guard let purchaseDate = try object.date("purchase_date_ms", "purchase_date") else {
            throw .missingField(object.path(of: "purchase_date_ms"))
        }
        let quantity = try object.integer("quantity") ?? 1
        guard let count = Int(exactly: quantity), count >= 0 else {
            throw .invalidField(object.path(of: "quantity"), expected: "a non-negative integer")
        }
        return ReceiptPurchase(
            productID: productID, transactionID: transactionID, originalTransactionID: originalTransactionID,
            purchaseDate: purchaseDate,
            // iOS 6 style: `expires_date` holds milliseconds; iOS 7 style: text beside `expires_date_ms`.
            expiresDate: try object.date("expires_date_ms", "expires_date", "expires_date_formatted"),
            cancellationDate: try object.date("cancellation_date_ms", "cancellation_date"),
            quantity: count)
    }
}
