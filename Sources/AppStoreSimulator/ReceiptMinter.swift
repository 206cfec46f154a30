import DepotCrypto
import Foundation

/// Mints legacy receipts the way the App Store shapes them, signed with the simulated store's test
/// PKI: app receipts (base64 PKCS#7 `SignedData` over a DER `SET` of attribute records, one type-17
/// record per in-app purchase) and iOS 6 transaction receipts (base64 old-style property lists).
struct ReceiptMinter: Sendable {
    let pki: TestPKI
    let bundleID: String

    /// An app receipt holding `transactions` (none: a receipt without in-app purchases).
    func appReceipt(_ transactions: [SimulatedTransaction], environment: SimulatedAppStore.Environment,
                    createdAt: Date) throws -> String {
        var records = [
            ASN1Record(type: 0, value: ASN1RecordSet.utf8StringDER(environment == .production ? "Production" : "ProductionSandbox")),
            ASN1Record(type: 2, value: ASN1RecordSet.utf8StringDER(bundleID)),
            ASN1Record(type: 3, value: ASN1RecordSet.utf8StringDER("1")),
            ASN1Record(type: 4, value: SecureRandom.bytes(16)),
            ASN1Record(type: 12, value: ASN1RecordSet.ia5StringDER(Self.date(createdAt))),
            ASN1Record(type: 19, value: ASN1RecordSet.utf8StringDER("1")),
        ]
        for transaction in transactions {
            var fields = [
                ASN1Record(type: 1701, value: ASN1RecordSet.integerDER(Int64(transaction.quantity))),
                ASN1Record(type: 1702, value: ASN1RecordSet.utf8StringDER(transaction.productID)),
                ASN1Record(type: 1703, value: ASN1RecordSet.utf8StringDER(transaction.transactionID)),
                ASN1Record(type: 1705, value: ASN1RecordSet.utf8StringDER(transaction.originalTransactionID)),
                ASN1Record(type: 1704, value: ASN1RecordSet.ia5StringDER(Self.date(transaction.purchaseDate))),
                ASN1Record(type: 1706, value: ASN1RecordSet.ia5StringDER(Self.date(transaction.originalPurchaseDate))),
            ]
            if let expires = transaction.expiresDate {
                fields.append(ASN1Record(type: 1708, value: ASN1RecordSet.ia5StringDER(Self.date(expires))))
            }
            if let revoked = transaction.revocationDate {
                fields.append(ASN1Record(type: 1712, value: ASN1RecordSet.ia5StringDER(Self.date(revoked))))
            }
            records.append(ASN1Record(type: 17, value: ASN1RecordSet.encode(fields)))
        }
        let signed = try PKCS7SignedData.sign(content: ASN1RecordSet.encode(records), signer: pki.leaf, key: pki.leafKey,
                                              intermediates: [pki.intermediate])
        return Data(signed).base64EncodedString()
    }

    /// An iOS 6 transaction receipt for one transaction.
    func transactionReceipt(_ transaction: SimulatedTransaction) throws -> String {
        let milliseconds = String(SimulatedTransaction.milliseconds(transaction.purchaseDate))
        let info = Self.propertyList([
            ("original-transaction-id", transaction.originalTransactionID), ("bvrs", "1.0"),
            ("transaction-id", transaction.transactionID), ("quantity", String(transaction.quantity)),
            ("original-purchase-date-ms", String(SimulatedTransaction.milliseconds(transaction.originalPurchaseDate))),
            ("product-id", transaction.productID), ("bid", bundleID), ("purchase-date-ms", milliseconds),
        ])
        let signature = try pki.leafKey.signES256(Array(info.utf8))
        var outer: [(String, String)] = [
            ("signature", Data(signature).base64EncodedString()),
            ("purchase-info", Data(info.utf8).base64EncodedString()),
        ]
        if transaction.environment == .sandbox { outer.append(("environment", "Sandbox")) }
        outer += [("pod", "100"), ("signing-status", "0")]
        return Data(Self.propertyList(outer).utf8).base64EncodedString()
    }

    /// `{\n\t"key" = "value";\n...}` (the values here never need escapes).
    static func propertyList(_ pairs: [(String, String)]) -> String {
        "{\n" + pairs.map { "\t\"\($0.0)\" = \"\($0.1)\";\n" }.joined() + "}"
    }

    /// RFC 3339 in UTC, whole seconds (`2026-12-01T19:48:00Z`), as receipts carry dates. A format style, not
    /// an `ISO8601DateFormatter` made per call (ICU set-up was a tenth of the minting time).
    static func date(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
