/// What a product is on the App Store (spec §2.1).
public enum ProductType: String, Sendable, CaseIterable, Codable {
    case consumable
    case nonConsumable = "non-consumable"
    case autoRenewable = "auto-renewable"
    case nonRenewing = "non-renewing"
}

/// Whether a product is listed.
public enum ProductStatus: String, Sendable, CaseIterable, Codable {
    /// Listed in the product lists.
    case live
    /// Not listed; owners can still download its pack.
    case retired
}

/// One product of the catalog.
public struct Product: Sendable, Equatable {
    public var id: String
    public var type: ProductType
    public var title: String
    public var description: String
    /// The content pack this product unlocks.
    public var pack: String?
    public var status: ProductStatus

    public init(id: String, type: ProductType, title: String, description: String = "", pack: String? = nil,
                status: ProductStatus = .live) {
        self.id = id
        self.type = type
        self.title = title
        self.description = description
        self.pack = pack
        self.status = status
    }
}

/// The catalog: every product, live or retired, in file order.
public struct Catalog: Sendable, Equatable {
    public var products: [Product]

    public init(products: [Product]) {
        self.products = products
    }

    /// Live products sorted by ID (what the lists show).
    public var liveProducts: [Product] {
        products.filter { $0.status == .live }.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    public func product(id: String) -> Product? {
        products.first { $0.id == id }
    }

    /// The product that unlocks a pack (live first, then retired).
    public func product(forPack pack: String) -> Product? {
        products.first { $0.pack == pack && $0.status == .live } ?? products.first { $0.pack == pack }
    }
}
