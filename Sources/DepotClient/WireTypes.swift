@_exported public import DepotWire

// The client speaks the server's wire types (`DepotWire`, part of this library product): one definition of
// each body and path, so the two cannot drift apart. `import DepotClient` brings them along, under the names
// this library has always used.

/// A pack version's manifest as the server sends it (``PackManifest``).
public typealias DownloadManifest = PackManifest

/// The answer to `POST /v1/receipts` (``PurchaseAnswer``): entitlements and rejected purchases.
public typealias UnlockResult = PurchaseAnswer

extension PurchaseAnswer {
    /// The download token for `pack`; throws ``DepotClientError/revoked`` when the pack was not released
    /// (handy in a token-renewal closure).
    public func token(forPack pack: String) throws -> String {
        guard let entitlement = entitlement(forPack: pack) else { throw DepotClientError.revoked }
        return entitlement.token
    }
}
