/// A publish that ``PublishRules`` refuses.
public enum PublishConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// The product already unlocks `owner`, not the `requested` pack.
    case productUnlocksAnotherPack(productID: String, owner: String, requested: String)
    /// The product exists with another type.
    case productTypeChanges(productID: String, existing: ProductType, requested: ProductType)
    /// `version` is at or below the pack's newest version `newest`.
    case versionNotAbove(pack: String, version: Int, newest: Int)

    public var description: String {
        switch self {
        case .productUnlocksAnotherPack(let product, let owner, let requested):
            "product \(product) unlocks pack \(owner), not \(requested); publish to pack \(owner) or use another product ID"
        case .productTypeChanges(let product, let existing, let requested):
            "product \(product) is \(existing.rawValue), not \(requested.rawValue); an App Store product's type never changes"
        case .versionNotAbove(let pack, let version, let newest):
            version == newest
                ? "pack \(pack) already has version \(version); versions are immutable"
                : "pack \(pack) has versions up to \(newest); versions are immutable and only go up, so \(version) cannot be published (next: \(newest + 1))"
        }
    }
}
