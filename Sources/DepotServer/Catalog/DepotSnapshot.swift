package import DepotCore
import DepotWire
import DepotCrypto
import Foundation

/// Everything a request may read about the catalog and content, as one immutable value.
/// A reload builds a new snapshot and swaps it in; a request sees one snapshot from start to end.
package final class DepotSnapshot: Sendable {
    /// Both lists, one copy per event loop (see `ProductList.replica()`).
    final class Lists: Sendable {
        let v1: ProductList
        let v2: ProductList

        init(v1: ProductList, v2: ProductList) {
            self.v1 = v1
            self.v2 = v2
        }
    }

    let catalog: Catalog
    /// The packs under `content/`.
    package let content: ContentIndex
    let v1: ProductList
    /// The v2 list.
    package let v2: ProductList
    /// `replicas[loopIndex]`: the lists for that loop.
    let replicas: [Lists]
    /// Problems that did not prevent serving (a broken pack no product uses).
    let warnings: [CatalogProblem]

    init(catalog: Catalog, content: ContentIndex, v1: ProductList, v2: ProductList, warnings: [CatalogProblem], replicaCount: Int) {
        self.catalog = catalog
        self.content = content
        self.v1 = v1
        self.v2 = v2
        replicas = (0..<max(1, replicaCount)).map { i in i == 0 ? Lists(v1: v1, v2: v2) : Lists(v1: v1.replica(), v2: v2.replica()) }
        self.warnings = warnings
    }

    var liveProductCount: Int { catalog.products.reduce(0) { $0 + ($1.status == .live ? 1 : 0) } }
}

/// Where the catalog and content live, with the names used in messages.
public struct DepotPaths: Sendable {
    public var catalogDirectory: String
    public var contentDirectory: String
    public var dataDirectory: String

    public init(catalogDirectory: String, contentDirectory: String, dataDirectory: String) {
        self.catalogDirectory = catalogDirectory
        self.contentDirectory = contentDirectory
        self.dataDirectory = dataDirectory
    }

    var productsFile: String { catalogDirectory + "/products.json" }
    var listRecordFile: String { catalogDirectory + "/" + ListValidatorRecord.fileName }
}

/// Builds snapshots from the files.
package enum SnapshotLoader {
    /// Loads catalog and content. Fails with every problem that makes the catalog unusable.
    package static func load(paths: DepotPaths, cacheControl: String, manifestCache: ManifestCache,
                     replicaCount: Int = 1) -> Result<DepotSnapshot, CatalogProblems> {
        let productsFile = paths.productsFile
        guard let data = FileManager.default.contents(atPath: productsFile) else {
            return .failure(CatalogProblems([CatalogProblem(file: productsFile, field: "", message: "cannot be read")]))
        }
        let content = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory,
                                        cache: manifestCache)
        switch CatalogDecoder.decode([UInt8](data), file: productsFile) {
        case .failure(let problems):
            return .failure(problems)
        case .success(let catalog):
            var problems: [CatalogProblem] = []
            var usedPacks = Set<String>()
            var summaries: [String: PackSummary] = [:]
            for (index, product) in catalog.products.enumerated() {
                guard let packID = product.pack else { continue }
                usedPacks.insert(packID)
                guard let entry = content.packs[packID], let live = entry.live else {
                    problems.append(CatalogProblem(file: productsFile, field: "products[\(index)].pack",
                                                   message: "pack \"\(packID)\" has no live version under \(paths.contentDirectory)"))
                    continue
                }
                summaries[packID] = PackSummary(id: packID, version: live.version, downloadBytes: live.manifest.downloadBytes)
            }
            // A problem in a pack that a product uses blocks the catalog; others are warnings.
            var warnings: [CatalogProblem] = []
            for problem in content.problems {
                let packName = Self.packName(of: problem.file, contentDirectory: paths.contentDirectory)
                if let packName, usedPacks.contains(packName), content.packs[packName]?.live == nil {
                    problems.append(problem)
                } else {
                    warnings.append(problem)
                }
            }
            if !problems.isEmpty { return .failure(CatalogProblems(problems)) }

            let record = ListValidatorRecord.load(from: URL(fileURLWithPath: paths.listRecordFile))
            warnings.append(contentsOf: ListValidatorRecord.problems(at: paths.listRecordFile))
            // A list whose bytes differ from the record changed when the newest file it is made from did:
            // v1 comes from products.json alone, v2 also from each listed pack's `current` and live manifest
            // (a version bumped by hand must not leave v2's Last-Modified where it was, or go back).
            let fileTime = FileStatus.modificationTime(productsFile) ?? 0
            var v2SourceTime = fileTime
            for product in catalog.liveProducts {
                guard let packID = product.pack, let live = content.packs[packID]?.live else { continue }
                v2SourceTime = max(v2SourceTime, FileStatus.modificationTime(paths.contentDirectory + "/" + packID + "/current") ?? 0,
                                   FileStatus.modificationTime(live.directory + "/manifest.json") ?? 0)
            }
            let v1Body = ProductListRenderer.v1(catalog)
            let v1Time = record.lastModified(of: "products_v1.json", contentHash: Hex.sha256(v1Body), fallback: fileTime)
            let v2Content = ProductListRenderer.v2(catalog, packs: summaries, updated: "")
            let v2Time = record.lastModified(of: "products_v2.json", contentHash: Hex.sha256(v2Content), fallback: v2SourceTime)
            let v2Body = ProductListRenderer.v2(catalog, packs: summaries, updated: Timestamp.rfc3339(v2Time))
            do {
                let v1 = try ProductList(name: "products_v1.json", body: v1Body, lastModified: v1Time, cacheControl: cacheControl)
                let v2 = try ProductList(name: "products_v2.json", body: v2Body, lastModified: v2Time, cacheControl: cacheControl)
                return .success(DepotSnapshot(catalog: catalog, content: content, v1: v1, v2: v2, warnings: warnings,
                                              replicaCount: replicaCount))
            } catch {
                return .failure(CatalogProblems([CatalogProblem(file: productsFile, field: "", message: "cannot compress the lists: \(error)")]))
            }
        }
    }

    /// The list contents that `catalog/lists.json` records (what `depot publish` writes).
    static func listContentHashes(catalog: Catalog, content: ContentIndex) -> (v1: String, v2: String) {
        var summaries: [String: PackSummary] = [:]
        for product in catalog.products {
            if let packID = product.pack, let live = content.packs[packID]?.live {
                summaries[packID] = PackSummary(id: packID, version: live.version, downloadBytes: live.manifest.downloadBytes)
            }
        }
        return (Hex.sha256(ProductListRenderer.v1(catalog)),
                Hex.sha256(ProductListRenderer.v2(catalog, packs: summaries, updated: "")))
    }

    private static func packName(of file: String, contentDirectory: String) -> String? {
        guard file.hasPrefix(contentDirectory + "/") else { return nil }
        return file.dropFirst(contentDirectory.count + 1).split(separator: "/").first.map(String.init)
    }
}
