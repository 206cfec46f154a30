import DepotWire
import Foundation

/// What a download token says (spec §4.3): the pack, the purchase it comes from, the account, the expiry.
public struct DownloadTokenClaims: Sendable, Equatable {
    public var pack: String
    /// The original transaction the grant comes from (operator grants use a `grant:` prefix).
    public var originalTransactionID: String
    public var account: String?
    /// Expiry, seconds since 1970.
    public var expires: Int64

    public init(pack: String, originalTransactionID: String, account: String?, expires: Int64) {
        self.pack = pack
        self.originalTransactionID = originalTransactionID
        self.account = account
        self.expires = expires
    }

    /// Compact JSON, keys in a fixed order: `{"p":..,"t":..,"a":..,"e":..}`.
    public func payload() -> [UInt8] {
        Array("{\"p\":\(JSONText.string(pack)),\"t\":\(JSONText.string(originalTransactionID)),\"a\":\(JSONText.optionalString(account)),\"e\":\(expires)}".utf8)
    }

    /// Reads a payload; nil when it is not exactly this shape.
    public static func parse(payload: [UInt8]) -> DownloadTokenClaims? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let pack = object["p"] as? String, let transaction = object["t"] as? String,
              let expiresNumber = object["e"] as? NSNumber else { return nil }
        let account: String?
        switch object["a"] {
        case nil, is NSNull: account = nil
        case let text as String: account = text
        default: return nil
        }
        return DownloadTokenClaims(pack: pack, originalTransactionID: transaction, account: account,
                                   expires: expiresNumber.int64Value)
    }
}
