import DepotCore
import DepotServer
import Foundation

/// `depot token`: prints a download token (support grants, testing).
enum TokenCommand: Command {
    static let name = "token"
    static let synopsis = "--pack ID [--ttl S] [--account A]"
    static let summary = "Print a download token for a pack (operators: support grants, testing)."
    static let options = [
        OptionSpec.flag("pack", "the pack the token opens", valueName: "ID"),
        OptionSpec.flag("ttl", "lifetime in seconds (default: --token-ttl)", valueName: "SECONDS"),
        OptionSpec.flag("account", "bind the token to an app account", valueName: "ACCOUNT"),
    ] + DepotConfiguration.options(["data", "token-secret", "token-ttl"])
    static let takesPositional = false

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        guard let pack = arguments.values.string("pack") else { Depot.fail(usage: "token: --pack is required") }
        let ttlText = arguments.values.string("ttl") ?? arguments.values.string("token-ttl") ?? "3600"
        guard let ttl = Int(ttlText), ttl > 0 else { Depot.fail(usage: "token: --ttl must be a positive number of seconds") }
        guard Identifiers.isValidPackID(pack) else { Depot.fail(usage: "token: --pack: \"\(pack)\" is not a pack ID (A-Z a-z 0-9 . _ -)") }
        do {
            let token = try OperatorTokens.issue(pack: pack, ttl: ttl, account: arguments.values.string("account"),
                                                 secret: arguments.values.string("token-secret"),
                                                 dataDirectory: arguments.values.string("data") ?? "./var")
            say(token)
            return 0
        } catch {
            return Depot.fail("token: \(error)")
        }
    }
}
