/// What a publish may change (spec §5, README "Publishing"): pure rules over the catalog on disk and the pack's
/// version numbers.
public enum PublishRules {
    /// Why publishing `productID` (of `type`) for `pack` would take over or change a product, or nil when it may:
    /// a publish updates its own product's title, description and status, but a product that unlocks another
    /// pack stays with it, and an App Store product's type never changes.
    public static func ownershipConflict(productID: String, pack: String, type: ProductType, in catalog: Catalog) -> PublishConflict? {
        guard let existing = catalog.product(id: productID) else { return nil }
        if let owner = existing.pack, owner != pack {
            return .productUnlocksAnotherPack(productID: productID, owner: owner, requested: pack)
        }
        if existing.type != type { return .productTypeChanges(productID: productID, existing: existing.type, requested: type) }
        return nil
    }

    /// Why `version` of `pack` cannot be published when the pack's newest version (on disk or live) is
    /// `newest` (0 for a new pack): versions are immutable and only go up, so the number of a pruned version is
    /// never given to other bytes and an older number never becomes live again.
    public static func versionRefusal(pack: String, version: Int, newest: Int) -> PublishConflict? {
        version <= newest ? .versionNotAbove(pack: pack, version: version, newest: newest) : nil
    }
}
