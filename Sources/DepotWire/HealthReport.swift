/// The detailed `GET /healthz` (operations.md §3): the instance's status, why it is not `ok`, and the figures
/// behind it. On a public port with an ops listener configured, only the status is sent (``HealthSummary``).
///
/// Built by the server's health contributors, each of which fills in its part and may lower the status with a
/// reason (``degrade(because:)``, ``fail(because:)``).
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

    /// The ledger (scale-out.md §3): `ok` or `unavailable`, and which backend.
    public struct LedgerState: Sendable, Hashable, Codable {
        public var status: String
        /// `sqlite` or `postgres`.
        public var backend: String

        public init(status: String, backend: String) {
            self.status = status
            self.backend = backend
        }
    }

    /// `ok`, `degraded` (still serving; `reasons` say what is wrong) or `unavailable` (cannot serve; `503`).
    public var status: String
    /// Why the status is not `ok`, one sentence each; empty (and left out) when it is.
    public var reasons: [String]
    public var catalog: CatalogState?
    public var disk: DiskState?
    public var ledger: LedgerState?

    public init(status: String = Self.ok, reasons: [String] = [], catalog: CatalogState? = nil, disk: DiskState? = nil,
                ledger: LedgerState? = nil) {
        self.status = status
        self.reasons = reasons
        self.catalog = catalog
        self.disk = disk
        self.ledger = ledger
    }

    public static let ok = "ok"
    public static let degraded = "degraded"
    public static let unavailable = "unavailable"

    /// Still serving, but not everything is well: `ok` becomes `degraded` (an `unavailable` stays so).
    public mutating func degrade(because reason: String) {
        reasons.append(reason)
        if status == Self.ok { status = Self.degraded }
    }

    /// This instance cannot serve: the status becomes `unavailable`.
    public mutating func fail(because reason: String) {
        reasons.append(reason)
        status = Self.unavailable
    }

    /// `true` unless `unavailable` (a load balancer keeps the instance in rotation).
    public var isServing: Bool { status != Self.unavailable }

    private enum CodingKeys: String, CodingKey { case status, reasons, catalog, disk, ledger }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(String.self, forKey: .status)
        reasons = try container.decodeIfPresent([String].self, forKey: .reasons) ?? []
        catalog = try container.decodeIfPresent(CatalogState.self, forKey: .catalog)
        disk = try container.decodeIfPresent(DiskState.self, forKey: .disk)
        ledger = try container.decodeIfPresent(LedgerState.self, forKey: .ledger)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        if !reasons.isEmpty { try container.encode(reasons, forKey: .reasons) }
        try container.encodeIfPresent(catalog, forKey: .catalog)
        try container.encodeIfPresent(disk, forKey: .disk)
        try container.encodeIfPresent(ledger, forKey: .ledger)
    }

    /// The public port's answer when an ops listener is configured.
    public var summary: HealthSummary { HealthSummary(status: status) }
}

/// `GET /healthz` on the public port when an ops listener is configured: `{"status": ...}` only (operations.md §3).
public struct HealthSummary: Sendable, Hashable, Codable {
    public var status: String

    public init(status: String) {
        self.status = status
    }
}
