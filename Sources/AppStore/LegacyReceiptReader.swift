import DepotCore
import DepotCrypto
import Foundation

/// Reads a transaction ID out of a legacy receipt without asking Apple (spec §3 step 1), so that
/// the App Store Server API can replace `verifyReceipt`:
///
/// - an **app receipt** is base64 of a PKCS#7 `SignedData` (read with libcrypto's `d2i_PKCS7`) whose
///   content is a DER `SET` of `SEQUENCE {type INTEGER, version INTEGER, value OCTET STRING}`; each
///   in-app purchase is a type-17 record holding the same structure, where type 1703 is the
///   transaction ID and 1705 the original one (UTF8String). The first purchase's original
///   transaction ID is taken (its transaction ID when it has none): any ID of the customer opens the
///   whole history, and the original one is the ID that stays the same across renewals. The PKCS#7 signature is not checked: the
///   receipt only names a transaction, and trust comes from the verified signed transactions of
///   Apple's answer.
/// - an **iOS 6 transaction receipt** is base64 of an old-style property list whose
///   `"purchase-info"` is base64 of another one holding `"transaction-id"`.
public enum LegacyReceiptReader {
    /// App receipt attribute types.
    enum AttributeType {
        static let bundleID: Int64 = 2
        static let inAppPurchase: Int64 = 17
        static let transactionID: Int64 = 1703
        static let originalTransactionID: Int64 = 1705
    }

    /// The transaction ID of base64 receipt data (whitespace and line breaks in the base64 are allowed).
    public static func transactionID(fromBase64 receipt: String) -> ReceiptTransactionID {
        let compact = withoutWhitespace(receipt)
        guard !compact.isEmpty, let data = Data(base64Encoded: compact) else {
            return .notAReceipt(reason: "the receipt is not base64")
        }
        return transactionID(fromReceipt: Array(data))
    }

    /// `text` without its whitespace. ASCII text (every base64 receipt) is filtered byte by byte: its
    /// whitespace characters are exactly tab, line feed, vertical tab, form feed, carriage return and
    /// space; any other text by `Character.isWhitespace` (much slower on kilobytes of base64).
    static func withoutWhitespace(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return text.filter { !$0.isWhitespace } }
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        guard utf8.contains(where: isWhitespace) else { return text }
        return String(decoding: utf8.filter { !isWhitespace($0) }, as: UTF8.self)
    }

    /// The transaction ID of decoded receipt bytes.
    public static func transactionID(fromReceipt bytes: [UInt8]) -> ReceiptTransactionID {
        if bytes.first == 0x30 { return appReceiptTransactionID(bytes) }
        if let dictionary = OldStylePropertyList.stringDictionary(bytes) { return transactionReceiptID(dictionary) }
        return .notAReceipt(reason: "neither an app receipt (PKCS#7) nor a transaction receipt (property list)")
    }

    private static func appReceiptTransactionID(_ der: [UInt8]) -> ReceiptTransactionID {
        let records: [ASN1Record]
        do {
            records = try ASN1RecordSet.parse(try PKCS7SignedData.content(of: der))
        } catch let failure as PKCS7SignedData.Failure {
            return .notAReceipt(reason: "an app receipt is a PKCS#7 SignedData: \(failure.reason)")
        } catch {
            return .notAReceipt(reason: "the app receipt's payload is not an attribute set: \(error)")
        }
        guard records.contains(where: { $0.type == AttributeType.bundleID }) else {
            return .notAReceipt(reason: "the app receipt has no bundle ID attribute")
        }
        for record in records where record.type == AttributeType.inAppPurchase {
            guard let fields = try? ASN1RecordSet.parse(record.value) else {
                return .notAReceipt(reason: "an in-app purchase record is not an attribute set")
            }
            let id = text(of: AttributeType.originalTransactionID, in: fields) ?? text(of: AttributeType.transactionID, in: fields)
            guard let id, !id.isEmpty else {
                return .notAReceipt(reason: "an in-app purchase record has no transaction ID")
            }
            return .found(id)
        }
        return .noPurchase
    }

    private static func text(of type: Int64, in fields: [ASN1Record]) -> String? {
        fields.first { $0.type == type }.flatMap { ASN1RecordSet.string(fromDER: $0.value) }
    }

    private static func transactionReceiptID(_ receipt: [String: String]) -> ReceiptTransactionID {
        guard let info = receipt["purchase-info"] else {
            return .notAReceipt(reason: "the transaction receipt has no purchase-info")
        }
        guard let decoded = Data(base64Encoded: info.filter { !$0.isWhitespace }),
              let purchase = OldStylePropertyList.stringDictionary(Array(decoded)) else {
            return .notAReceipt(reason: "the transaction receipt's purchase-info is not a base64 property list")
        }
        guard let id = purchase["transaction-id"] ?? purchase["original-transaction-id"], !id.isEmpty else {
            return .notAReceipt(reason: "the transaction receipt's purchase-info has no transaction-id")
        }
        return .found(id)
    }
}
