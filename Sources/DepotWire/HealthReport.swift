/// `GET /healthz` (spec §4.6): `200` with `"status": "ok"`, or `503` with the same shape and the reason.
public struct HealthReport: Sendable, Hashable, Codable {
    /// The catalog being served.
    public struct CatalogState: Sendable, Hashable, Codable {
        /// Live products.
        public var products: Int
        /// When the v2 list last changed (RFC 3339), `null` without a catalog.
        public var updated: String?
        /// Why the last reload failed, when it did.
        public var error: String?

        public init(products: Int, updated: String?, error: String? = nil) {
            self.products = products
            self.updated = updated
            self.error = error
        }

        private enum CodingKeys: String, CodingKey { case products, updated, error }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(products, forKey: .products)
            try container.encode(updated, forKey: .updated)
            try container.encodeIfPresent(error, forKey: .error)
        }
    }

    /// Free space on the volumes Depot writes to.
    public struct DiskState: Sendable, Hashable, Codable {
        public var contentFreeBytes: Int64
        public var dataFreeBytes: Int64

        public init(contentFreeBytes: Int64, dataFreeBytes: Int64) {
            self.contentFreeBytes = contentFreeBytes
            self.dataFreeBytes = dataFreeBytes
        }
    }

    /// `ok` or `unavailable`.
    public var status: String
    public var catalog: CatalogState
    public var disk: DiskState
    /// `not writable` when the ledger cannot be written.
    public var ledger: String?

    public init(status: String, catalog: CatalogState, disk: DiskState, ledger: String? = nil) {
        self.status = status
        self.catalog = catalog
        self.disk = disk
        self.ledger = ledger
    }

    private enum CodingKeys: String, CodingKey { case status, catalog, disk, ledger }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(catalog, forKey: .catalog)
        try container.encode(disk, forKey: .disk)
        try container.encodeIfPresent(ledger, forKey: .ledger)
    }
}
