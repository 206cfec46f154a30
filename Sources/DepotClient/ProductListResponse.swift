import Foundation

/// Where a product list came from.
public enum ProductListSource: Sendable, Equatable {
    /// A fresh `200` from the server (now cached).
    case network
    /// The server answered `304 Not Modified`: the cached list is current.
    case notModified
    /// The server could not be reached (network error or `5xx`): the cached list, possibly stale.
    case offline
}

/// A product list and how it was obtained.
public struct ProductListResponse<List: Sendable>: Sendable {
    /// The list.
    public var list: List
    /// Network, revalidated cache, or cache while offline.
    public var source: ProductListSource
    /// The validators stored with the list.
    public var etag: String?
    public var lastModified: String?
    /// Why the server could not be used, when `source == .offline`.
    public var offlineReason: DepotClientError?

    /// True when `list` is the cached copy (`304` or offline).
    public var isFromCache: Bool { source != .network }
}
