/// Why a catalog-backed answer cannot be given.
enum CatalogFailure: Error, Sendable, Equatable {
    /// No catalog has loaded yet (the lists answer `503` until one does).
    case notLoaded
}
