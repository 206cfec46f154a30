/// `GET /admin/v1/products` (operations.md §1): every product of the catalog, live and retired, as in
/// `catalog/products.json`.
public struct AdminProducts: Sendable, Hashable, Codable {
    /// One catalog entry.
    public struct Product: Sendable, Hashable, Codable {
        public var id: String
        /// `consumable`, `non-consumable`, `auto-renewable`, `non-renewing`.
        public var type: String
        public var title: String
        public var description: String
        /// The pack the product unlocks; left out when it has none (as in `products.json`).
        public var pack: String?
        /// `live` or `retired`.
        public var status: String

        public init(id: String, type: String, title: String, description: String, pack: String?, status: String) {
            self.id = id
            self.type = type
            self.title = title
            self.description = description
            self.pack = pack
            self.status = status
        }

        private enum CodingKeys: String, CodingKey { case id, type, title, description, pack, status }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(type, forKey: .type)
            try container.encode(title, forKey: .title)
            try container.encode(description, forKey: .description)
            try container.encodeIfPresent(pack, forKey: .pack)
            try container.encode(status, forKey: .status)
        }
    }

    public var products: [Product]

    public init(products: [Product]) {
        self.products = products
    }
}

/// `200` to `POST /admin/v1/products/{id}/retire` and `.../unretire`: the product's status now.
public struct ProductStatusAnswer: Sendable, Hashable, Codable {
    public var id: String
    /// `retired` or `live`.
    public var status: String

    public init(id: String, status: String) {
        self.id = id
        self.status = status
    }
}
