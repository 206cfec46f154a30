import DepotCore
import DepotWire
import Foundation
import HTTP
import Ledger
import Server

/// The support view (spec app-store-server-api §8): `GET /admin/v1/purchases?transaction=ID|account=A[&after=]`
/// and `POST /admin/v1/purchases/{originalTransactionId}/revoke|restore`, behind the admin token like every
/// admin route. A support decision is recorded through ``AccessChanges`` exactly as a refund notification is,
/// so it reaches every instance the same way and within the same bound.
struct PurchaseSupport: Sendable {
    let ledger: Ledger
    let store: CatalogStore
    let logger: Logger
    var now: @Sendable () -> Date = { Date() }

    /// The longest transaction ID or account a query may name.
    static let longestKey = 256

    /// `GET /admin/v1/purchases`.
    func lookup(_ request: RouteRequest) throws(SupportFailure) -> Handling {
        let query = try Self.query(request.target)
        let log = logger.with(requestID: request.requestID)
        return .reply(.later { [self] in
            do throws(LedgerError) {
                let answer: AdminPurchases
                switch query {
                case .transaction(let id):
                    let record = try await ledger.purchase(transactionID: id)
                    answer = AdminPurchases(purchases: record.map { [wire($0)] } ?? [], next: nil)
                case .account(let account, let after):
                    let page = try await ledger.purchases(account: account, after: after)
                    answer = AdminPurchases(purchases: page.purchases.map(wire), next: page.next?.encoded)
                }
                return JSONAnswer.response(answer, .adminPurchases)
            } catch {
                log.error(.ledgerFailed, "purchase look-up failed: \(error)")
                return SupportFailure.ledgerUnavailable.answer.response(.adminPurchases)
            }
        })
    }

    /// `POST /admin/v1/purchases/{originalTransactionId}/revoke` or `…/restore`: `200` with the purchase as it
    /// now stands, whether this request changed it or it already stood so (nothing is recorded then).
    func decide(_ request: RouteRequest, _ decision: SupportDecision) -> Handling {
        let original = request.parameter("original")
        // No purchase has a longer ID: refused before the ledger, the log or the answer sees it.
        guard original.utf8.count <= Self.longestKey else {
            return .reply(.response(SupportFailure.badQuery("The original transaction ID must be 1 to \(Self.longestKey) bytes long.")
                .answer.response(.adminPurchaseDecision)))
        }
        let log = logger.with(requestID: request.requestID)
        return .reply(.later { [self] in
            do throws(SupportFailure) {
                return JSONAnswer.response(wire(try await decide(decision, original: original, log: log)), .adminPurchaseDecision)
            } catch {
                return error.answer.response(.adminPurchaseDecision)
            }
        })
    }

    /// Plans and records `decision`; the purchase as it stands afterwards.
    func decide(_ decision: SupportDecision, original: String, log: Logger) async throws(SupportFailure) -> PurchaseRecord {
        let found: SupportChange?
        do throws(LedgerError) {
            found = try await ledger.supportChange(decision, originalTransactionID: original, now: now())
        } catch {
            log.error(.ledgerFailed, "support \(decision.rawValue) of \(original) failed: \(error)")
            throw .ledgerUnavailable
        }
        guard let change = found else { throw .unknownPurchase(original) }
        do throws(LedgerError) {
            // Already as decided: nothing is recorded, and the answer is the purchase as it stands.
            guard !change.isEmpty else { return try await ledger.purchase(transactionID: original) ?? change.purchase }
            _ = try await AccessChanges(ledger: ledger).apply(
                id: change.notificationID, type: change.type, revoke: change.revoke, restore: change.restore, now: now(),
                origin: .support(originalTransactionID: original), logger: log)
            return try await ledger.purchase(transactionID: original) ?? change.purchase
        } catch {
            log.error(.ledgerFailed, "support \(decision.rawValue) of \(original) failed: \(error)")
            throw .ledgerUnavailable
        }
    }

    /// What a look-up asks for.
    enum Query: Equatable {
        case transaction(String)
        case account(String, after: PurchaseCursor?)
    }

    /// The look-up of a query string: exactly one of `transaction` and `account`, `after` only with `account`.
    static func query(_ target: RequestTarget) throws(SupportFailure) -> Query {
        let items = target.queryItems()
        let known: Set<String> = ["transaction", "account", "after"]
        if let unknown = items.first(where: { !known.contains($0.name) }) {
            throw .badQuery("Unknown query parameter `\(unknown.name)`; look up by `transaction=ID` or `account=A` (with `after=` for the next page).")
        }
        for name in known where items.filter({ $0.name == name }).count > 1 {
            throw .badQuery("`\(name)` may be given once.")
        }
        let transaction = target.queryValue("transaction")
        let account = target.queryValue("account")
        let after = target.queryValue("after")
        for (name, value) in [("transaction", transaction), ("account", account)] {
            guard let value else { continue }
            guard !value.isEmpty, value.utf8.count <= longestKey else {
                throw .badQuery("`\(name)` must be 1 to \(longestKey) bytes long.")
            }
        }
        switch (transaction, account) {
        case (let transaction?, nil):
            guard after == nil else { throw .cursorWithoutAccount }
            return .transaction(transaction)
        case (nil, let account?):
            guard let after else { return .account(account, after: nil) }
            guard let cursor = PurchaseCursor(encoded: after) else { throw .badCursor }
            return .account(account, after: cursor)
        default:
            throw .badQuery("Give exactly one of `transaction=ID` and `account=A`.")
        }
    }

    /// The wire form of `record`, with the pack its product unlocks in the catalog now.
    func wire(_ record: PurchaseRecord) -> AdminPurchases.Purchase {
        let snapshot = store.current
        let products = snapshot?.catalog.products ?? []
        return Self.wire(record, pack: { id in products.first { $0.id == id }?.pack }, totals: { pack, version in
            snapshot?.content.packs[pack]?.versions[version].map { Totals($0.manifest) }
        })
    }

    /// A pack version's chunks and bytes (its manifest's).
    struct Totals {
        var chunks: Int
        var bytes: Int64

        init(_ manifest: PackManifest) {
            chunks = manifest.files.reduce(0) { $0 + $1.chunks.count }
            bytes = manifest.downloadBytes
        }
    }

    /// The wire form of `record`; `pack` names the pack of a product ID (nil: none), `totals` a pack version's
    /// size (nil: not on disk).
    static func wire(_ record: PurchaseRecord, pack: (String) -> String?, totals: (String, Int) -> Totals?) -> AdminPurchases.Purchase {
        AdminPurchases.Purchase(
            originalTransactionId: record.originalTransactionID, productId: record.productID, pack: pack(record.productID),
            account: record.accounts.last?.account,
            accounts: record.accounts.map { AdminPurchases.Binding(account: $0.account, bound: InternetDate.format($0.boundAt)) },
            environment: record.environment, purchased: InternetDate.format(record.purchased),
            state: record.revoked ? AdminPurchases.State.revoked : AdminPurchases.State.granted,
            grants: record.transactions.map {
                AdminPurchases.Grant(transactionId: $0.transactionID, productId: $0.productID, purchased: InternetDate.format($0.purchaseDate),
                                     expires: $0.expiresDate.map(InternetDate.format), source: $0.source.rawValue,
                                     revoked: $0.revocationDate.map(InternetDate.format))
            },
            revocations: record.revocations.map {
                AdminPurchases.Revocation(at: InternetDate.format($0.at), reason: $0.reason, by: $0.by.rawValue, transactionId: $0.transactionID,
                                          restored: $0.restoredAt.map(InternetDate.format), restoredBy: $0.restoredBy?.rawValue)
            },
            delivery: AdminPurchases.Delivery(versions: record.deliveries.map { sent in
                let total = totals(sent.pack, sent.version)
                return AdminPurchases.DeliveredVersion(
                    pack: sent.pack, version: sent.version, chunks: sent.chunks, totalChunks: total?.chunks, deliveredBytes: sent.deliveredBytes,
                    totalBytes: total?.bytes, sentBytes: sent.sentBytes, complete: total.map { sent.chunks >= $0.chunks },
                    firstSent: InternetDate.format(sent.firstSent), lastSent: InternetDate.format(sent.lastSent),
                    lastDelivered: sent.lastDelivered.map(InternetDate.format))
            }),
            consumptionAnswers: record.consumptionAnswers.map { answer in
                AdminPurchases.ConsumptionAnswer(
                    notification: answer.request.notificationUUID, transactionId: answer.request.transactionId, state: answer.state.rawValue,
                    attempts: answer.attempts, queued: InternetDate.format(answer.queued), finished: answer.finished.map(InternetDate.format),
                    deliveryStatus: answer.sent?.deliveryStatus, consumptionPercentage: answer.sent?.consumptionPercentage,
                    refundPreference: answer.sent?.refundPreference, lastError: answer.lastError)
            })
    }
}
