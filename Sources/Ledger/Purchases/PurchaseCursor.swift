import Foundation

/// Where a page of an account's purchases ended: the last purchase's date and original transaction ID. The
/// order (newest first, then by ID) is fixed by data that does not change, so a page that follows a cursor
/// never repeats or skips a purchase that was already there.
public struct PurchaseCursor: Sendable, Equatable {
    /// The purchase date of the last purchase shown, in milliseconds.
    let purchasedMS: Int64
    /// Its original transaction ID.
    let originalTransactionID: String

    /// The position of a purchase made at `purchasedMS` (milliseconds since 1970) with this original transaction ID.
    package init(purchasedMS: Int64, originalTransactionID: String) {
        self.purchasedMS = purchasedMS
        self.originalTransactionID = originalTransactionID
    }

    /// The opaque text form (`?after=`): base64url of `<milliseconds>:<original transaction ID>`.
    public var encoded: String {
        Data("\(purchasedMS):\(originalTransactionID)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Reads `encoded`; `nil` when it is not a cursor this ledger made.
    public init?(encoded: String) {
        guard !encoded.isEmpty, encoded.count <= 1_024,
              encoded.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":"),
              let milliseconds = Int64(text[..<colon]) else { return nil }
        let original = String(text[text.index(after: colon)...])
        guard !original.isEmpty else { return nil }
        self.init(purchasedMS: milliseconds, originalTransactionID: original)
    }
}
