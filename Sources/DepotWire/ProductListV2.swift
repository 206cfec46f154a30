public import Foundation

/// `GET /products_v1.json` (spec §4.1): the live product IDs, sorted.
public typealias ProductListV1 = [String]

/// `GET /products_v2.json` (spec §4.1): the live products with their types, texts and packs.
///
/// The server writes this list by hand, byte for byte the same for the same catalog (its bytes are the list's
/// validators, recorded in `catalog/lists.json`); a test decodes what it writes with this type.
public struct ProductListV2: Sendable, Hashable, Codable {
    /// One product on sale.
    public struct Product: Sendable, Hashable, Codable {
        /// The App Store product identifier.
        public var id: String
        /// `consumable`, `non-consumable`, ... (unknown future kinds keep their raw value).
        public var type: Kind
        public var title: String
        public var description: String
        /// The content pack the product unlocks, if any (`null` on the wire).
        public var pack: Pack?

        public init(id: String, type: Kind, title: String, description: String, pack: Pack?) {
            self.id = id
            self.type = type
            self.title = title
            self.description = description
            self.pack = pack
        }

        private enum CodingKeys: String, CodingKey { case id, type, title, description, pack }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            type = try container.decode(Kind.self, forKey: .type)
            title = try container.decodeIfPresent(String.self, forKey: .title) ?? ""
            description = try container.decodeIfPresent(String.self, forKey: .description) ?? ""
            pack = try container.decodeIfPresent(Pack.self, forKey: .pack)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(type, forKey: .type)
            try container.encode(title, forKey: .title)
            try container.encode(description, forKey: .description)
            try container.encode(pack, forKey: .pack)
        }
    }

    /// A product type as sent on the wire; the raw value is kept so a new type is not a decoding failure.
    public struct Kind: RawRepresentable, Hashable, Sendable, Codable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
        public static let consumable = Kind(rawValue: "consumable")
        public static let nonConsumable = Kind(rawValue: "non-consumable")
        public static let autoRenewable = Kind(rawValue: "auto-renewable")
        public static let nonRenewing = Kind(rawValue: "non-renewing")
    }

    /// The live version of a product's pack and its size.
    public struct Pack: Sendable, Hashable, Codable {
        public var id: String
        public var version: Int
        public var downloadBytes: Int64

        public init(id: String, version: Int, downloadBytes: Int64) {
            self.id = id
            self.version = version
            self.downloadBytes = downloadBytes
        }
    }

    /// The format version (2).
    public var version: Int
    /// When the list last changed.
    public var updated: Date?
    /// Live products, sorted by `id`.
    public var products: [Product]

    public init(version: Int = 2, updated: Date?, products: [Product]) {
        self.version = version
        self.updated = updated
        self.products = products
    }

    private enum CodingKeys: String, CodingKey { case version, updated, products }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        updated = try container.decodeInternetDate(forKey: .updated)
        products = try container.decode([Product].self, forKey: .products)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encodeInternetDate(updated, forKey: .updated)
        try container.encode(products, forKey: .products)
    }
}
