import ArgumentParsing
import DepotServer
import DepotWire
import Foundation

/// `depot purchases show`: what the ledger knows of a purchase (spec app-store-server-api §7), read from the
/// ledger directly like the other admin verbs, the same facts as `GET /admin/v1/purchases`.
struct PurchasesShowCommand: Command {
    static let name = "show"
    static let synopsis: String? = "--transaction ID | --account A [--after CURSOR] [--data DIR] [--ledger L] [--catalog DIR] [--content DIR]"
    static let summary = "Print what the ledger knows of a purchase: account, grants, revocations, delivery, consumption answers."

    @Option("transaction", help: "any transaction ID of the purchase (the original or a renewal)", valueName: "ID")
    var transaction: String?
    @Option("account", help: "list the purchases bound to this app account, newest first, 100 a page", valueName: "ACCOUNT")
    var account: String?
    @Option("after", help: "the next page of --account (the cursor the previous page printed)", valueName: "CURSOR")
    var after: String?
    @OptionGroup(only: "catalog", "content", "data", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let query: PurchaseLookup.Query
        switch (transaction, account) {
        case (let transaction?, nil):
            guard after == nil else { throw UsageError("--after pages through --account; it does not go with --transaction") }
            guard !transaction.isEmpty else { throw UsageError("--transaction needs a transaction ID") }
            query = .transaction(transaction)
        case (nil, let account?):
            guard !account.isEmpty else { throw UsageError("--account needs an account") }
            query = .account(account, after: after)
        default:
            throw UsageError("give exactly one of --transaction ID and --account A")
        }
        let found: AdminPurchases
        do {
            found = try await PurchaseLookup.find(query, configuration: configuration)
        } catch {
            throw CommandFailure(error.description)
        }
        guard !found.purchases.isEmpty else {
            switch query {
            case .transaction(let id): throw CommandFailure("no purchase with transaction ID \(id) in the ledger")
            case .account(let account, _): throw CommandFailure("no purchases bound to account \(account) in the ledger")
            }
        }
        for (index, purchase) in found.purchases.enumerated() {
            if index > 0 { say("") }
            for line in Self.lines(purchase) { say(line) }
        }
        if let next = found.next { say("\nmore: --after \(next)") }
        return 0
    }

    /// `purchase` as aligned lines for a person.
    static func lines(_ purchase: AdminPurchases.Purchase) -> [String] {
        var lines = ["purchase \(purchase.originalTransactionId): \(purchase.state)"]
        func row(_ label: String, _ text: String) { lines.append("  " + label.padding(toLength: 13, withPad: " ", startingAt: 0) + text) }
        row("product", purchase.productId + (purchase.pack.map { " (pack \($0))" } ?? " (no pack)"))
        row("environment", purchase.environment)
        row("purchased", purchase.purchased)
        row("account", purchase.accounts.isEmpty ? "none"
            : purchase.accounts.map { "\($0.account) (bound \($0.bound))" }.joined(separator: ", "))
        for (index, grant) in purchase.grants.enumerated() {
            var text = "\(grant.transactionId) \(grant.productId) purchased \(grant.purchased)"
            if let expires = grant.expires { text += ", expires \(expires)" }
            text += " [\(grant.source)]"
            if let revoked = grant.revoked { text += ", revoked \(revoked)" }
            row(index == 0 ? "grants" : "", text)
        }
        if purchase.revocations.isEmpty { row("revocations", "none") }
        for (index, revocation) in purchase.revocations.enumerated() {
            var text = "\(revocation.at) \(revocation.reason) by \(revocation.by)"
            if let transaction = revocation.transactionId { text += " (transaction \(transaction))" }
            text += revocation.restored.map { ", restored \($0)" + (revocation.restoredBy.map { " by \($0)" } ?? "") } ?? ", in force"
            row(index == 0 ? "revocations" : "", text)
        }
        if purchase.delivery.versions.isEmpty { row("delivered", "nothing recorded") }
        for (index, sent) in purchase.delivery.versions.enumerated() {
            let chunks = sent.totalChunks.map { "\(sent.chunks) of \($0) chunks" } ?? "\(sent.chunks) chunks"
            let bytes = sent.totalBytes.map { "\(sent.deliveredBytes) of \($0) bytes" } ?? "\(sent.deliveredBytes) bytes"
            let complete = sent.complete == true ? ", complete" : ""
            row(index == 0 ? "delivered" : "", "\(sent.pack) version \(sent.version): \(chunks), \(bytes)\(complete) (\(sent.sentBytes) bytes sent), "
                + "last \(sent.lastSent)")
        }
        if purchase.consumptionAnswers.isEmpty { row("consumption", "no refund request answered") }
        for (index, answer) in purchase.consumptionAnswers.enumerated() {
            var text = "\(answer.queued) for \(answer.transactionId): \(answer.state)"
            if let status = answer.deliveryStatus {
                text += " \(status)" + (answer.consumptionPercentage.map { " \($0)" } ?? "") + (answer.refundPreference.map { " \($0)" } ?? "")
            }
            text += answer.finished.map { " at \($0)" } ?? ", \(answer.attempts) attempt\(answer.attempts == 1 ? "" : "s")"
            row(index == 0 ? "consumption" : "", text)
        }
        return lines
    }
}
