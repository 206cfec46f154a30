import DepotClient
import DepotCore
import DepotCrypto
import DepotServer
import Foundation

extension DemoCommand {
    /// Step 8: a level fixed and republished; the player's copy is updated by delta (`pack-updates.md` §2).
    static func showUpdate(client: DepotClient, publisher: Publisher, configuration: DepotConfiguration, source: String,
                           device: String) async throws {
        step(8, "The studio fixes a stage of level 5 and republishes it; a player's update fetches only what changed")
        let token = try OperatorTokens.issue(pack: "level5", ttl: 600, account: nil, secret: configuration.tokenSecret,
                                             dataDirectory: configuration.paths.dataDirectory)
        let destination = URL(fileURLWithPath: device)
        guard case .completed(let installed) = try await PackDownloader(client: client, pack: "level5", token: token,
                                                                         destination: destination).start() else {
            throw Failure(description: "the level 5 download did not finish")
        }
        say("   a player has level 5 version \(installed.version) (\(installed.downloadBytes) bytes, content-defined chunks of about 256 KiB)")
        // The fix: 4 KiB of stage data rewritten in the middle of stages.bin.
        let stages = URL(fileURLWithPath: source + "/stages.bin")
        var bytes = try Data(contentsOf: stages)
        bytes.replaceSubrange(2_000_000..<2_004_096, with: SecureRandom.bytes(4096))
        try bytes.write(to: stages)
        let fixed = try publisher.publish(PublishRequest(pack: "level5", productID: DemoShop.level5, type: .nonConsumable,
                                                         title: "Level 5: Canyon", sources: [source + "/stages.bin", source + "/stages"]))
        say("   published level 5 version \(fixed.version) with the fixed stage")
        var live = installed.version
        let started = Date()
        while live < fixed.version, Date().timeIntervalSince(started) < 5 {
            try await Task.sleep(for: .milliseconds(100))
            live = (try? await client.products().list.products.first { $0.id == "com.example.depot.level5" }?.pack?.version) ?? live
        }
        let updater = PackDownloader(client: client, pack: "level5", token: token, destination: destination)
        guard case .completed(let updated) = try await updater.start() else { throw Failure(description: "the update did not finish") }
        let progress = await updater.progress
        say("   the app updated to version \(updated.version): reused \(FetchCommand.mebibytes(progress.reusedBytes)) MiB from version \(installed.version), fetched \(FetchCommand.mebibytes(progress.fetchedBytes)) MiB (\(progress.fetchedBytes) bytes)")
    }
}
