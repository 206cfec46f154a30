import DepotCore
import DepotCrypto
import DepotServer
import Foundation

/// The shop `depot demo` runs on: built fresh in the demo's workspace every time, with the same `Publisher` as
/// `depot publish`, so the story is the same whatever the current directory's `catalog/` and `content/` hold.
enum DemoShop {
    static let bundleID = "com.example.depot"
    static let level2 = "com.example.depot.level2"
    static let level5 = "com.example.depot.level5"
    /// Chunks of 256 KiB: the 1.25 MiB pack is six chunks, so the interruption falls between them.
    static let chunkSize: Int64 = 256 * 1024

    /// Writes a catalog with two products without packs, then publishes Level 2 (three files, one in a folder) into
    /// `paths`.
    static func build(_ paths: DepotPaths, scratch: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: paths.catalogDirectory, withIntermediateDirectories: true)
        try fm.createDirectory(atPath: paths.contentDirectory, withIntermediateDirectories: true)
        let catalog = """
        {
          "products": [
            {"id": "com.example.depot.coins100", "type": "consumable", "title": "100 Coins", "description": "A pouch of coins for the shop.", "status": "live"},
            {"id": "com.example.depot.hints30", "type": "non-renewing", "title": "Hints for 30 Days", "description": "Unlimited hints for a month.", "status": "live"}
          ]
        }

        """
        try Data(catalog.utf8).write(to: URL(fileURLWithPath: paths.catalogDirectory + "/products.json"))
        let source = scratch + "/level2"
        try fm.createDirectory(atPath: source + "/stages", withIntermediateDirectories: true)
        try Data(bytes(count: 1_310_720, seed: 2)).write(to: URL(fileURLWithPath: source + "/stages.bin"))
        try Data("Level 2: Glacier. Twelve new stages on the ice.\n".utf8).write(to: URL(fileURLWithPath: source + "/README.txt"))
        try Data("{\"stages\": 12, \"theme\": \"glacier\"}\n".utf8).write(to: URL(fileURLWithPath: source + "/stages/index.json"))
        _ = try Publisher(paths: paths).publish(PublishRequest(
            pack: "level2", productID: level2, type: .nonConsumable, title: "Level 2: Glacier",
            description: "Twelve new stages on the ice.", chunkSize: chunkSize,
            sources: [source]))
    }

    /// The files of the level published during the story (4 MiB of stages, so that the fix republished later
    /// changes a small part of it), written into `scratch/level5`.
    static func level5Sources(in scratch: String) throws -> [String] {
        let source = scratch + "/level5"
        try FileManager.default.createDirectory(atPath: source + "/stages", withIntermediateDirectories: true)
        try Data(bytes(count: 4 << 20, seed: 5)).write(to: URL(fileURLWithPath: source + "/stages.bin"))
        try Data("{\"stages\": 8, \"theme\": \"canyon\"}\n".utf8).write(to: URL(fileURLWithPath: source + "/stages/index.json"))
        return [source + "/stages.bin", source + "/stages"]
    }

    /// Reproducible bytes that do not compress (SHA-256 in counter mode).
    static func bytes(count: Int, seed: UInt8) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 32)
        var block: UInt64 = 0
        while out.count < count {
            out.append(contentsOf: SHA256.hash([seed] + withUnsafeBytes(of: block.littleEndian) { Array($0) }))
            block += 1
        }
        return Array(out.prefix(count))
    }
}
