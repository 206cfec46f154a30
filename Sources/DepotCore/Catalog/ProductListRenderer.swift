import DepotWire

/// The live version of a pack, as the v2 list shows it.
public struct PackSummary: Sendable, Equatable {
    public var id: String
    public var version: Int
    public var downloadBytes: Int64

    public init(id: String, version: Int, downloadBytes: Int64) {
        self.id = id
        self.version = version
        self.downloadBytes = downloadBytes
    }
}

/// Renders the product lists of spec §4.1, byte for byte the same for the same catalog.
///
/// Written by hand rather than through `WireJSON`: these bytes are the lists' identities (their ETags, and the
/// hashes `catalog/lists.json` records on every replica), so their layout must never move. A test decodes
/// them as the wire `ProductListV1`/`ProductListV2` the client reads.
public enum ProductListRenderer {
    /// `["id1", "id2"]`: the live product IDs, sorted — the form of Apple's guide.
    public static func v1(_ catalog: Catalog) -> [UInt8] {
        let ids = catalog.liveProducts.map { JSONText.string($0.id) }
        return Array(("[" + ids.joined(separator: ", ") + "]\n").utf8)
    }

    /// The v2 object. `updated` is an RFC 3339 UTC timestamp; pass "" to render the content that the
    /// list's validator record hashes (everything but the time).
    public static func v2(_ catalog: Catalog, packs: [String: PackSummary], updated: String) -> [UInt8] {
        var out = "{\"version\": 2,\n \"updated\": \(JSONText.string(updated)),\n \"products\": ["
        for (i, product) in catalog.liveProducts.enumerated() {
            out += i == 0 ? "\n  " : ",\n  "
            out += "{\"id\": \(JSONText.string(product.id)), \"type\": \(JSONText.string(product.type.rawValue)), "
            out += "\"title\": \(JSONText.string(product.title)), \"description\": \(JSONText.string(product.description)), "
            if let packID = product.pack, let pack = packs[packID] {
                out += "\"pack\": {\"id\": \(JSONText.string(pack.id)), \"version\": \(pack.version), \"downloadBytes\": \(pack.downloadBytes)}}"
            } else {
                out += "\"pack\": null}"
            }
        }
        out += "]}\n"
        return Array(out.utf8)
    }
}
