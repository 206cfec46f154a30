/// Why a catalog-backed answer cannot be given.
package enum CatalogFailure: Error, Sendable, Equatable {
    /// No catalog has loaded yet (the lists answer `503` until one does).
    case notLoaded
}
