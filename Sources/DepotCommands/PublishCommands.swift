import ArgumentParsing
import DepotCore
import DepotServer
package import Platform

/// `depot publish`: a new pack version and its product, live at once.
package struct PublishCommand: Command {
    package static let name = "publish"
    package static let synopsis: String? =
        "--pack ID --product PRODUCT_ID --type TYPE --title T [--description D] [--version N] [--chunking content|fixed] [--chunk-size BYTES] [--stage] FILE|DIR..."
    package static let summary = "Publish files as a new pack version and put its product on sale."

    @Option("pack", help: "pack ID (a directory under content/)", valueName: "ID")
    var pack: String
    @Option("product", help: "App Store product ID", valueName: "PRODUCT_ID")
    var product: String
    @Option("type", help: "product type")
    var type: ProductType
    @Option("title", help: "product title", valueName: "TEXT")
    var title: String
    @Option("description", help: "product description", valueName: "TEXT")
    var productDescription: String?
    @Option("version", .versionNumber, help: "version number", defaultText: "the next one")
    var version: Int?
    @Option("chunking", help: "how files are cut into chunks: content-defined boundaries, or fixed sizes")
    var chunking = ChunkingMethod.content
    @Option("chunk-size", .integer(in: 1...Int64.max), help: "average chunk size for content chunking, the chunk size for fixed",
            valueName: "BYTES", defaultText: "262144 for content, 1048576 for fixed")
    var chunkSize: Int64?
    @Option("stage", help: "publish without making the version live (testers fetch it with ?staged=true; depot promote makes it live)")
    var stage = false
    @OptionGroup(only: "catalog", "content", "ledger") var configuration: DepotConfiguration
    @Arguments(valueName: "FILE|DIR...") var sources: [String]

    /// Free space of the content volume (the test publisher fakes a full one).
    package var space: any VolumeSpace = SystemVolumeSpace()
    /// Called after each durable file operation (the test publisher crashes at one).
    package var durableStepDone: @Sendable (String) -> Void = { _ in }

    package init() {}

    package func run() async throws -> Int32 {
        guard !sources.isEmpty else { throw UsageError("give the files or directories to publish") }
        let request = PublishRequest(pack: pack, productID: product, type: type, title: title, description: productDescription,
                                     version: version, chunking: chunking, chunkSize: chunkSize, stage: stage, sources: sources)
        let publisher = Publisher(paths: configuration.paths, space: space, durableStepDone: durableStepDone)
        let outcome = try await PublishErrors.asUsageErrors(holding: SharedPublishLock(location: configuration.ledger)) {
            () throws(PublishError) in try publisher.publish(request)
        }
        if stage {
            say("staged \(outcome.pack) version \(outcome.version): \(outcome.files) files, \(outcome.downloadBytes) bytes; not live (depot promote --pack \(outcome.pack) --version \(outcome.version))")
        } else {
            say("published \(outcome.pack) version \(outcome.version): \(outcome.files) files, \(outcome.downloadBytes) bytes; \(outcome.productID) is live")
        }
        return 0
    }
}

/// `depot retire`: takes a product off sale (owners keep access).
struct RetireCommand: Command {
    static let name = "retire"
    static let synopsis: String? = "--product ID"
    static let summary = "Take a product off sale; owners keep access to its pack."

    @Option("product", help: "App Store product ID", valueName: "ID")
    var product: String
    @OptionGroup(only: "catalog", "content", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        try await changeStatus(of: product, configuration) { publisher, product throws(PublishError) in
            try publisher.retire(productID: product)
        }
        say("retired \(product)")
        return 0
    }
}

/// `depot unretire`: puts a retired product on sale again.
struct UnretireCommand: Command {
    static let name = "unretire"
    static let synopsis: String? = "--product ID"
    static let summary = "Put a retired product on sale again."

    @Option("product", help: "App Store product ID", valueName: "ID")
    var product: String
    @OptionGroup(only: "catalog", "content", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        try await changeStatus(of: product, configuration) { publisher, product throws(PublishError) in
            try publisher.unretire(productID: product)
        }
        say("\(product) is live")
        return 0
    }
}

/// Retire and unretire: one catalog change under the publish lock, its errors as the other verbs report them.
private func changeStatus(of product: String, _ configuration: DepotConfiguration,
                          _ change: @escaping @Sendable (Publisher, String) throws(PublishError) -> Void) async throws {
    let publisher = Publisher(paths: configuration.paths)
    try await PublishErrors.asUsageErrors(holding: SharedPublishLock(location: configuration.ledger)) {
        () throws(PublishError) in try change(publisher, product)
    }
}

/// `depot prune`: deletes old versions, never the live one or a staged one (`pack-updates.md` §4).
struct PruneCommand: Command {
    static let name = "prune"
    static let synopsis: String? = "--keep N [--pack ID] [--dry-run]"
    static let summary = "Delete versions older than the newest N; the live and staged versions stay."

    @Option("keep", .integer(in: 1...Int.max), help: "versions to keep per pack")
    var keep: Int
    @Option("pack", .packID, help: "prune this pack only")
    var pack: String?
    @Option("dry-run", help: "only print what would be deleted")
    var dryRun = false
    @OptionGroup(only: "catalog", "content", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let publisher = Publisher(paths: configuration.paths)
        let (keep, pack, dryRun) = (self.keep, self.pack, self.dryRun)
        let removed = try await PublishErrors.asUsageErrors(holding: SharedPublishLock(location: configuration.ledger)) {
            () throws(PublishError) in try publisher.prune(keep: keep, pack: pack, dryRun: dryRun)
        }
        let names = removed.map { "\($0.pack)/\($0.version) (\($0.bytes) bytes)" }
        if removed.isEmpty {
            say("nothing to prune")
        } else {
            say((dryRun ? "would remove " : "removed ") + names.joined(separator: ", "))
        }
        return 0
    }
}

/// How the publishing commands report a `PublishError`.
enum PublishErrors {
    /// Runs `work`; bad arguments (identifiers, files, an unknown product) become usage errors (exit 64),
    /// anything else stays a failure (exit 1).
    static func asUsageErrors<T>(_ work: () throws(PublishError) -> T) throws -> T {
        do {
            return try work()
        } catch {
            if case .invalid = error { throw UsageError(error.description) }
            throw error
        }
    }

    /// `asUsageErrors(_:)` holding `lock`, the database's publish lock with a PostgreSQL `--ledger` (scale-out
    /// §4); a lock that cannot be taken is a configuration error naming `--ledger`.
    static func asUsageErrors<T: Sendable>(holding lock: SharedPublishLock, _ work: @escaping @Sendable () throws(PublishError) -> T) async throws -> T {
        let outcome: Result<T, PublishError>
        do {
            outcome = try await lock.holding { () -> Result<T, PublishError> in
                do throws(PublishError) { return .success(try work()) } catch { return .failure(error) }
            }
        } catch {
            throw ConfigurationError(option: "ledger", "cannot take the publish lock: \(DepotApp.oneLine(error))")
        }
        return try asUsageErrors { () throws(PublishError) -> T in try outcome.get() }
    }
}


extension OptionParser where Value == Int {
    /// A pack version: a positive decimal without leading zeros.
    static var versionNumber: OptionParser<Int> {
        OptionParser(valueName: "N", refusal: "is not a version number (a positive integer)", parse: { Identifiers.parseVersion($0) },
                     format: { String($0) })
    }
}
