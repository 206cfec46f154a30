import ArgumentParsing
import DepotCore
import DepotServer

/// `depot token`: prints a download token (support grants, testing).
struct TokenCommand: Command {
    static let name = "token"
    static let synopsis: String? = "--pack ID [--ttl S] [--account A] [--content DIR] [--data DIR | --token-secret S]"
    static let summary = "Print a download token for a pack (operators: support grants, testing)."

    @Option("pack", .packID, help: "the pack the token opens")
    var pack: String
    @Option("ttl", .integer(in: 1...(86_400 * 365)), help: "lifetime in seconds", valueName: "SECONDS", defaultText: "--token-ttl")
    var ttl: Int?
    @Option("account", help: "bind the token to an app account", valueName: "ACCOUNT")
    var account: String?
    @OptionGroup(only: "content", "data", "token-secret", "token-ttl", "ledger") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        do {
            say(try await OperatorTokens.issue(pack: pack, ttl: ttl ?? configuration.tokenTTL, account: account,
                                               secret: configuration.tokenSecret, dataDirectory: configuration.dataDirectory,
                                               contentDirectory: configuration.contentDirectory, ledger: configuration.ledger))
        } catch let refusal as OperatorTokens.Refusal {
            throw CommandFailure(refusal.description)
        }
        return 0
    }
}

extension OptionParser where Value == String {
    /// A pack ID (`A-Z a-z 0-9 . _ -`, not starting with a dot).
    static var packID: OptionParser<String> {
        OptionParser(valueName: "ID", refusal: "is not a pack ID (A-Z a-z 0-9 . _ -)", parse: { Identifiers.isValidPackID($0) ? $0 : nil },
                     format: { $0 })
    }
}
