import Foundation

/// A purchase in the receipt that did not release a pack (spec §4.2 `rejected`).
public struct RejectedPurchase: Sendable, Hashable, Decodable {
    /// Why; the raw value is kept so a reason added later is not a decoding failure.
    public struct Reason: RawRepresentable, Hashable, Sendable, Decodable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public static let revoked = Reason(rawValue: "revoked")
        public static let expired = Reason(rawValue: "expired")
        public static let unknownProduct = Reason(rawValue: "unknown_product")
        public static let noPack = Reason(rawValue: "no_pack")
        public static let boundToOtherAccount = Reason(rawValue: "bound_to_other_account")
    }

    public var productId: String?
    public var transactionId: String?
    public var reason: Reason

    public init(productId: String?, transactionId: String?, reason: Reason) {
        self.productId = productId
        self.transactionId = transactionId
        self.reason = reason
    }
}
