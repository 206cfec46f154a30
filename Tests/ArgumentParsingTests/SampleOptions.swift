import ArgumentParsing
import Foundation

/// A server-like configuration: every kind of setting.
struct SampleSettings: ParsableOptions {
    @Setting("host", .nonEmptyText, help: "listen address", valueName: "ADDRESS")
    var host = "127.0.0.1"
    @Setting("port", .integer(in: 0...65535), help: "listen port; `0` picks one", valueName: "PORT")
    var port = 8080
    @Setting("data", .directory, help: "runtime data")
    var data = "./var"
    @Setting("verbose", help: "say more")
    var verbose = false
    @Setting("log", help: "one line per request")
    var log = Toggle.on
    @Setting("format", help: "how lines look")
    var format = LineFormat.text
    @Setting("secret", .text(minimumLength: 8), help: "a key", valueName: "SECRET", defaultText: "none (signing off)")
    var secret: String?
    @Setting("roots", .commaSeparated, help: "trusted files", defaultText: "the built-in one")
    var roots: [String]?
    @Setting("timeout", .seconds, help: "seconds to wait")
    var timeout: Double = 10
    @Setting("upstream", .httpURL, help: "where to ask")
    var upstream = URL(string: "https://example.com/verify")!
    @Setting("receipt-validation", help: "how receipts are checked")
    var receiptValidation = ReceiptValidation.auto

    init() {}
}

enum LineFormat: String, Sendable, CaseIterable, EnumeratedOption {
    case text, json
}

/// Words too long to list as the value name.
enum ReceiptValidation: String, Sendable, CaseIterable, EnumeratedOption {
    case auto
    case serverAPI = "server-api"
    case verifyReceipt = "verify-receipt"
}

/// A command with its own options, part of the settings and positional arguments.
struct SampleCommand: Command {
    static let name = "publish"
    static let summary = "Publish `files`."

    @Option("pack", help: "the pack", valueName: "ID")
    var pack: String
    @Option("version", .integer(in: 1...1_000), help: "version number", defaultText: "the next one")
    var version: Int?
    @Option("chunk-size", .integer(in: 1...Int64.max), help: "chunk size", valueName: "BYTES")
    var chunkSize: Int64 = 1_048_576
    @Option("transaction", help: "a file; may be repeated", valueName: "FILE")
    var transactions: [String] = []
    @Option("dry-run", help: "change nothing")
    var dryRun = false
    @OptionGroup(only: "data", "port") var settings: SampleSettings
    @Arguments(valueName: "FILE...") var files: [String]

    /// Not an option: what `prepare` injects.
    var injected = "production"

    func run() async throws -> Int32 {
        if pack == "fail-usage" { throw UsageError("the pack is refused") }
        if pack == "fail-config" { throw ConfigurationError(option: "data", "is not writable") }
        if pack == "fail" { throw SampleFailure() }
        Ran.record("\(pack) v\(version ?? 0) \(chunkSize) \(transactions) \(dryRun) \(settings.data) \(settings.port) \(files) \(injected)")
        return pack == "seven" ? 7 : 0
    }
}

struct SampleFailure: Error, CustomStringConvertible {
    var description: String { "the disk caught fire" }
}

/// A command that takes every setting.
struct SampleServe: Command {
    static let name = "serve"
    static let summary = "Serve."
    static let synopsis: String? = "[options]"
    @OptionGroup var settings: SampleSettings

    func run() async throws -> Int32 {
        Ran.record("serve \(settings.host):\(settings.port)")
        return 0
    }
}

/// Subcommands of a group.
struct SampleCopy: Command {
    static let name = "copy"
    static let summary = "Copy a ledger."
    @Option("from", help: "source", valueName: "LOCATION") var from: String
    @Option("to", help: "destination", valueName: "LOCATION") var to: String

    func run() async throws -> Int32 {
        Ran.record("copy \(from) → \(to)")
        return 0
    }
}

struct SampleBackup: Command {
    static let name = "backup"
    static let summary = "Back up a ledger."
    @Option("to", help: "destination", valueName: "FILE") var to: String

    func run() async throws -> Int32 {
        Ran.record("backup → \(to)")
        return 0
    }
}

/// The command a group runs when no subcommand is named.
struct SampleSimulator: Command {
    static let name = "simulator"
    static let summary = "Run the simulator."
    @Option("port", .integer(in: 0...65535), help: "listen port") var port = 0

    func run() async throws -> Int32 {
        Ran.record("simulator on \(port)")
        return 0
    }
}
