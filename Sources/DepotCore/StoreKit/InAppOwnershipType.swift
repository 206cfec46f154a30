/// Whether the user bought the item or has it through Family Sharing (`inAppOwnershipType`).
public struct InAppOwnershipType: AppStoreWireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Bought by this user.
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")
    /// Shared by a family member.
    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")
}
