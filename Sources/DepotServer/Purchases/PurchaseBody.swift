import DepotCore
import Foundation

/// The JSON body of `POST /v1/receipts` (spec §4.2), checked field by field.
package struct PurchaseBody: Sendable {
    /// What the purchase is proven by: a receipt, or signed transactions.
    package enum Proof: Sendable {
        case receipt(String)
        case transactions([String])
    }

    /// The receipt or the transactions sent.
    package var proof: Proof
    var account: String?
    /// `"history": true` (spec app-store-server-api §4): restore the customer's whole history from the first
    /// transaction.
    var history = false

    static let maxTransactions = 100
    static let maxAccountLength = 256

    /// Parses the body; throws `badRequest` (a `400`) explaining what is wrong.
    package static func parse(_ bytes: [UInt8]) throws(PurchaseFailure) -> PurchaseBody {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw .badRequest("The body must be a JSON object.")
        }
        var account: String?
        if let value = object["account"], !(value is NSNull) {
            guard let text = value as? String, !text.isEmpty, text.utf8.count <= maxAccountLength,
                  !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .badRequest("`account` must be a non-empty string of at most \(maxAccountLength) bytes, without control characters.")
            }
            account = text
        }
        var history = false
        if let value = object["history"], !(value is NSNull) {
            guard let flag = JSONScalar.boolean(value) else { throw .badRequest("`history` must be true or false.") }
            history = flag
        }
        let receipt = object["receipt"]
        let transactions = object["transactions"]
        switch (receipt, transactions) {
        case (nil, nil):
            throw .badRequest("Send either `receipt` (base64 app receipt) or `transactions` (StoreKit 2 JWS).")
        case (.some, .some):
            throw .badRequest("Send `receipt` or `transactions`, not both.")
        case (let value?, nil):
            guard let text = value as? String else { throw .badRequest("`receipt` must be a string.") }
            let trimmed = Self.trimmed(text)
            guard !trimmed.isEmpty, isBase64(trimmed), Data(base64Encoded: trimmed, options: .ignoreUnknownCharacters) != nil else {
                throw .badRequest("`receipt` is not base64.")
            }
            guard !history else {
                throw .badRequest("`history` goes with `transactions`: a receipt validated through the App Store Server API already gives the whole history.")
            }
            return PurchaseBody(proof: .receipt(trimmed), account: account)
        case (nil, let value?):
            guard let list = value as? [Any], !list.isEmpty else {
                throw .badRequest("`transactions` must be a non-empty array of JWS strings.")
            }
            guard list.count <= maxTransactions else {
                throw .badRequest("At most \(maxTransactions) transactions per request.")
            }
            var jws: [String] = []
            for item in list {
                // An empty string is a string: it fails the JWS checks (422, check `format`) like any other non-JWS.
                guard let text = item as? String else {
                    throw .badRequest("`transactions` must hold JWS strings.")
                }
                jws.append(text)
            }
            return PurchaseBody(proof: .transactions(jws), account: account, history: history)
        }
    }

    /// `text` without the whitespace and newlines at its ends. When both ends are ASCII characters other
    /// than whitespace (every well-formed receipt) nothing is trimmed and Foundation is not asked, which
    /// would copy kilobytes of base64 through `NSString`.
    package static func trimmed(_ text: String) -> String {
        let isEdge: (UInt8?) -> Bool = { byte in
            guard let byte else { return false }
            return byte < 0x80 && byte != 0x20 && !(0x09...0x0D).contains(byte)
        }
        if isEdge(text.utf8.first), isEdge(text.utf8.last) { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Standard base64 alphabet, padding, and line breaks only.
    static func isBase64(_ text: String) -> Bool {
        var padding = 0
        var count = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "+"), UInt8(ascii: "/"):
                if padding > 0 { return false }
                count += 1
            case UInt8(ascii: "="):
                padding += 1
                count += 1
                if padding > 2 { return false }
            case 0x0A, 0x0D:
                continue
            default:
                return false
            }
        }
        return count % 4 == 0
    }
}
