/// One subcommand: its options are its stored properties, its behaviour is ``run()``, and `--help` is
/// generated from the same declarations the parser uses.
///
///     struct RetireCommand: Command {
///         static let name = "retire"
///         static let summary = "Take a product off sale; owners keep access to its pack."
///         @Option("product", help: "App Store product ID", valueName: "ID") var product: String
///         @OptionGroup(only: "catalog", "content") var configuration: DepotConfiguration
///         func run() async throws -> Int32 { ... }
///     }
public protocol Command: ParsableOptions {
    /// The word that selects the command (`serve`; `copy` inside the `ledger` group).
    static var name: String { get }
    /// One sentence for the command list and `--help`.
    static var summary: String { get }
    /// The usage line after the command's name; nil derives it from the declarations.
    static var synopsis: String? { get }

    /// Does the work and returns the exit status. A thrown ``UsageError`` exits 64, a
    /// ``ConfigurationError`` or any other error exits 1, each with one line on stderr.
    func run() async throws -> Int32
}

extension Command {
    public static var synopsis: String? { nil }
}
