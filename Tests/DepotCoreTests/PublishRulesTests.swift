import DepotCore
import Testing

/// README "Publishing": a publish may not take over another pack's product nor change a product's type; versions
/// only go up.
@Suite struct PublishRulesTests {
    static let catalog = Catalog(products: [
        Product(id: "com.example.level2", type: .nonConsumable, title: "L2", pack: "level2"),
        Product(id: "com.example.coins", type: .consumable, title: "Coins"),
    ])

    @Test func aNewProductOrItsOwnPackMayBePublished() {
        #expect(PublishRules.ownershipConflict(productID: "com.example.new", pack: "new", type: .consumable, in: Self.catalog) == nil)
        #expect(PublishRules.ownershipConflict(productID: "com.example.level2", pack: "level2", type: .nonConsumable, in: Self.catalog) == nil)
        // A product without a pack may get one.
        #expect(PublishRules.ownershipConflict(productID: "com.example.coins", pack: "coins", type: .consumable, in: Self.catalog) == nil)
    }

    @Test func anotherPacksProductIsRefused() {
        let conflict = PublishRules.ownershipConflict(productID: "com.example.level2", pack: "level9", type: .nonConsumable, in: Self.catalog)
        #expect(conflict == .productUnlocksAnotherPack(productID: "com.example.level2", owner: "level2", requested: "level9"))
        #expect(conflict?.description.contains("unlocks pack level2, not level9") == true)
    }

    @Test func aTypeChangeIsRefused() {
        let conflict = PublishRules.ownershipConflict(productID: "com.example.coins", pack: "coins", type: .nonConsumable, in: Self.catalog)
        #expect(conflict == .productTypeChanges(productID: "com.example.coins", existing: .consumable, requested: .nonConsumable))
        #expect(conflict?.description.contains("type never changes") == true)
    }

    @Test(arguments: [(1, 0, true), (4, 3, true), (3, 3, false), (2, 3, false), (1, 7, false)])
    func versionsOnlyGoUp(_ version: Int, newest: Int, allowed: Bool) {
        let refusal = PublishRules.versionRefusal(pack: "p", version: version, newest: newest)
        #expect((refusal == nil) == allowed)
        if let refusal { #expect(refusal == .versionNotAbove(pack: "p", version: version, newest: newest)) }
    }

    @Test func versionRefusalsSayWhatIsNext() {
        #expect(PublishConflict.versionNotAbove(pack: "p", version: 3, newest: 3).description == "pack p already has version 3; versions are immutable")
        #expect(PublishConflict.versionNotAbove(pack: "p", version: 2, newest: 5).description.hasSuffix("(next: 6)"))
    }
}
