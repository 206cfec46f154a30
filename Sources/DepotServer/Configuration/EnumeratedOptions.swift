public import ArgumentParsing
public import DepotCore
public import Ledger

// Domain enumerations that options take, each accepted by its raw values (`--account-policy first`).
// An enumeration of the configuration's own (`--log-format text|json`) conforms where it is declared.

extension AccountPolicy: EnumeratedOption {}

extension ProductType: EnumeratedOption {}

/// `--receipt-validation`: which Apple service validates legacy receipts (spec app-store-server-api §1).
public enum ReceiptValidationMode: String, Sendable, CaseIterable, EnumeratedOption {
    /// The App Store Server API when a key is configured, else `verifyReceipt`.
    case auto
    /// The App Store Server API (a key is required).
    case serverAPI = "server-api"
    /// Apple's deprecated `verifyReceipt`, even with a key.
    case verifyReceipt = "verify-receipt"
}
