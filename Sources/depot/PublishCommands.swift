import DepotCore
import DepotServer
import Foundation

/// `depot publish`: a new pack version and its product, live at once.
enum PublishCommand: Command {
    static let name = "publish"
    static let synopsis = "--pack ID --product PRODUCT_ID --type TYPE --title T [--description D] [--version N] [--chunk-size BYTES] FILE|DIR..."
    static let summary = "Publish files as a new pack version and put its product on sale."
    static let options = [
        OptionSpec.flag("pack", "pack ID (a directory under content/)", valueName: "ID"),
        OptionSpec.flag("product", "App Store product ID", valueName: "PRODUCT_ID"),
        OptionSpec.flag("type", "consumable, non-consumable, auto-renewable or non-renewing", valueName: "TYPE"),
        OptionSpec.flag("title", "product title", valueName: "TEXT"),
        OptionSpec.flag("description", "product description", valueName: "TEXT"),
        OptionSpec.flag("version", "version number (default: the next one)", valueName: "N"),
        OptionSpec.flag("chunk-size", default: "1048576", "chunk size of the manifest", valueName: "BYTES"),
    ] + DepotConfiguration.options(["catalog", "content"])
    static let takesPositional = true

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        let v = arguments.values
        for required in ["pack", "product", "type", "title"] where v.string(required) == nil {
            Depot.fail(usage: "publish: --\(required) is required")
        }
        guard let type = ProductType(rawValue: v.string("type")!) else {
            Depot.fail(usage: "publish: --type must be one of \(ProductType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var version: Int?
        if let text = v.string("version") {
            guard let parsed = Identifiers.parseVersion(text) else { Depot.fail(usage: "publish: --version must be a positive integer") }
            version = parsed
        }
        guard let chunkSize = Int64(v.string("chunk-size") ?? ""), chunkSize > 0 else {
            Depot.fail(usage: "publish: --chunk-size must be a positive integer")
        }
        guard !arguments.positional.isEmpty else { Depot.fail(usage: "publish: give the files or directories to publish") }
        let request = PublishRequest(pack: v.string("pack")!, productID: v.string("product")!, type: type, title: v.string("title")!,
                                     description: v.string("description"), version: version, chunkSize: chunkSize,
                                     sources: arguments.positional)
        let publisher = Publisher(paths: paths(v), space: TestHooks.volumeSpace())
        do {
            let outcome = try publisher.publish(request)
            say("published \(outcome.pack) version \(outcome.version): \(outcome.files) files, \(outcome.downloadBytes) bytes; \(outcome.productID) is live")
            return 0
        } catch {
            // Bad arguments (identifiers, files, an unknown product) are usage errors.
            if case .invalid = error { Depot.fail(usage: "publish: \(error)") }
            return Depot.fail("publish: \(error)")
        }
    }

    static func paths(_ v: OptionValues) -> DepotPaths {
        DepotPaths(catalogDirectory: v.string("catalog") ?? "./catalog", contentDirectory: v.string("content") ?? "./content",
                   dataDirectory: "")
    }
}

/// `depot retire`: takes a product off sale (owners keep access).
enum RetireCommand: Command {
    static let name = "retire"
    static let synopsis = "--product ID"
    static let summary = "Take a product off sale; owners keep access to its pack."
    static let options = [OptionSpec.flag("product", "App Store product ID", valueName: "ID")] + DepotConfiguration.options(["catalog", "content"])
    static let takesPositional = false

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        guard let product = arguments.values.string("product") else { Depot.fail(usage: "retire: --product is required") }
        do {
            try Publisher(paths: PublishCommand.paths(arguments.values)).retire(productID: product)
            say("retired \(product)")
            return 0
        } catch {
            // Bad arguments (identifiers, files, an unknown product) are usage errors.
            if case .invalid = error { Depot.fail(usage: "retire: \(error)") }
            return Depot.fail("retire: \(error)")
        }
    }
}

/// `depot prune`: deletes old versions that are not live.
enum PruneCommand: Command {
    static let name = "prune"
    static let synopsis = "--keep N"
    static let summary = "Delete versions older than the newest N that are not live."
    static let options = [OptionSpec.flag("keep", "versions to keep per pack", valueName: "N")] + DepotConfiguration.options(["catalog", "content"])
    static let takesPositional = false

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        guard let text = arguments.values.string("keep"), let keep = Int(text), keep >= 1 else {
            Depot.fail(usage: "prune: --keep must be a positive integer")
        }
        do {
            let removed = try Publisher(paths: PublishCommand.paths(arguments.values)).prune(keep: keep)
            say(removed.isEmpty ? "nothing to prune" : "removed " + removed.joined(separator: ", "))
            return 0
        } catch {
            // Bad arguments (identifiers, files, an unknown product) are usage errors.
            if case .invalid = error { Depot.fail(usage: "prune: \(error)") }
            return Depot.fail("prune: \(error)")
        }
    }
}

/// Hooks that only tests set.
enum TestHooks {
    /// `DEPOT_TEST_FREE_BYTES=N` makes the content volume report N bytes free (out-of-space tests).
    static func volumeSpace() -> any VolumeSpace {
        if let text = ProcessInfo.processInfo.environment["DEPOT_TEST_FREE_BYTES"], let free = Int64(text) {
            return FixedVolumeSpace(free: free)
        }
        return SystemVolumeSpace()
    }
}
