import DepotCore
import Foundation

extension Publisher {
    /// Changes a product's title and/or description in `catalog/products.json` (temp file, fsync, rename, as every
    /// catalog write), under the publish lock; the product lists follow on the next reload. Returns the product
    /// as written. An unknown product is `unknownProduct`; an empty title or one over 1,000 characters, or a
    /// description over 10,000, is `invalid`.
    func editProduct(productID: String, title: String?, description: String?) throws(PublishError) -> Product {
        if let title {
            guard !title.isEmpty, title.count <= 1000 else { throw .invalid("`title` must be 1 to 1000 characters") }
        }
        if let description, description.count > 10_000 { throw .invalid("`description` must be at most 10000 characters") }
        return try withLock { () throws(PublishError) -> Product in
            let catalog = try loadCatalog()
            guard let index = catalog.products.firstIndex(where: { $0.id == productID }) else { throw .unknownProduct(productID) }
            var updated = catalog
            if let title { updated.products[index].title = title }
            if let description { updated.products[index].description = description }
            guard updated.products[index] != catalog.products[index] else { return catalog.products[index] }
            let content = ContentIndex.load(contentDirectory: paths.contentDirectory, displayPrefix: paths.contentDirectory, cache: ManifestCache())
            try writeCatalog(updated, previous: catalog, previousContent: content)
            return updated.products[index]
        }
    }
}
