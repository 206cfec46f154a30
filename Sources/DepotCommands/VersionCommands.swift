import ArgumentParsing
import DepotCore
import DepotServer

/// `depot rollback`: a new live version with an older version's files (`pack-updates.md` §3).
struct RollbackCommand: Command {
    static let name = "rollback"
    static let synopsis: String? = "--pack ID [--to N]"
    static let summary = "Publish an older version's files again as the next version, live at once (hard links, no copy)."

    @Option("pack", help: "pack ID", valueName: "ID")
    var pack: String
    @Option("to", .versionNumber, help: "version whose files to publish again", defaultText: "the newest version older than the live one")
    var to: Int?
    @OptionGroup(only: "catalog", "content", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let publisher = Publisher(paths: configuration.paths)
        let (pack, to) = (self.pack, self.to)
        let outcome = try await PublishErrors.asUsageErrors(holding: SharedPublishLock(location: configuration.ledger)) {
            () throws(PublishError) in try publisher.rollback(pack: pack, to: to)
        }
        say("rolled back \(outcome.pack): version \(outcome.version) is live with the files of an older version (\(outcome.files) files, \(outcome.downloadBytes) bytes)")
        return 0
    }
}

/// `depot promote`: makes a staged version live (`pack-updates.md` §4).
struct PromoteCommand: Command {
    static let name = "promote"
    static let synopsis: String? = "--pack ID --version N"
    static let summary = "Make a staged version (published with --stage) live."

    @Option("pack", help: "pack ID", valueName: "ID")
    var pack: String
    @Option("version", .versionNumber, help: "the staged version")
    var version: Int
    @OptionGroup(only: "catalog", "content", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let publisher = Publisher(paths: configuration.paths)
        let (pack, version) = (self.pack, self.version)
        let outcome = try await PublishErrors.asUsageErrors(holding: SharedPublishLock(location: configuration.ledger)) {
            () throws(PublishError) in try publisher.promote(pack: pack, version: version)
        }
        say("promoted \(outcome.pack) version \(outcome.version): live (\(outcome.files) files, \(outcome.downloadBytes) bytes)")
        return 0
    }
}
