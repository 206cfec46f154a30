public import DepotWire
import DepotCore
import Foundation
import Ledger

/// `depot purchases show`: the support view read straight from the ledger `--ledger`/`--data` name (as the
/// other admin verbs act on the files and the ledger themselves, no server is needed), with the same facts as
/// `GET /admin/v1/purchases`. The pack comes from the catalog `--catalog` names, a version's size from `--content`.
public enum PurchaseLookup {
    /// What to look up.
    public enum Query: Sendable {
        case transaction(String)
        /// An account's purchases; `after` is a page's `next`.
        case account(String, after: String?)
    }

    /// Why a look-up found nothing or could not run: one line for `depot: purchases: show: `.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The purchases `query` finds, newest first (one page of at most 100), and the next page's cursor.
    public static func find(_ query: Query, configuration: DepotConfiguration) async throws(Failure) -> AdminPurchases {
        var cursor: PurchaseCursor?
        if case .account(_, let after?) = query {
            guard let parsed = PurchaseCursor(encoded: after) else {
                throw Failure(description: "--after is not a cursor from a page of purchases")
            }
            cursor = parsed
        }
        let location = configuration.ledger
        let dataDirectory = configuration.paths.dataDirectory
        if let path = location.sqlitePath(dataDirectory: dataDirectory), !FileManager.default.fileExists(atPath: path) {
            throw Failure(description: "no ledger at \(path) (--data, --ledger)")
        }
        let ledger: Ledger
        do {
            ledger = try await Ledger.open(location, dataDirectory: dataDirectory, poolSize: 1)
        } catch {
            throw Failure(description: "cannot open the ledger: \(DepotApp.oneLine(error))")
        }
        let paths = configuration.paths
        let packs = packs(paths)
        let pack: (String) -> String? = { packs[$0] }
        let totals: (String, Int) -> PurchaseSupport.Totals? = { pack, version in
            let file = paths.contentDirectory + "/\(pack)/\(version)/manifest.json"
            guard let data = FileManager.default.contents(atPath: file),
                  let manifest = try? PackManifest.decode([UInt8](data), file: file) else { return nil }
            return PurchaseSupport.Totals(manifest)
        }
        do throws(LedgerError) {
            let answer: AdminPurchases
            switch query {
            case .transaction(let id):
                let record = try await ledger.purchase(transactionID: id)
                answer = AdminPurchases(purchases: record.map { [PurchaseSupport.wire($0, pack: pack, totals: totals)] } ?? [], next: nil)
            case .account(let account, _):
                let page = try await ledger.purchases(account: account, after: cursor)
                answer = AdminPurchases(purchases: page.purchases.map { PurchaseSupport.wire($0, pack: pack, totals: totals) }, next: page.next?.encoded)
            }
            await ledger.close()
            return answer
        } catch {
            await ledger.close()
            throw Failure(description: "cannot read the ledger: \(DepotApp.oneLine(error))")
        }
    }

    /// Product ID → pack, from the catalog on disk (empty when it cannot be read: the look-up still works).
    private static func packs(_ paths: DepotPaths) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: paths.productsFile),
              case .success(let catalog) = CatalogDecoder.decode([UInt8](data), file: paths.productsFile) else { return [:] }
        var packs: [String: String] = [:]
        for product in catalog.products { if let pack = product.pack { packs[product.id] = pack } }
        return packs
    }
}
