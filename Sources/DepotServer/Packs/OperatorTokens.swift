import ArgumentParsing
import DepotCore
import Foundation

/// Tokens issued by an operator (`depot token`): support grants and testing.
public enum OperatorTokens {
    /// A token for `pack`, valid `ttl` seconds, signed with the configured secret or `<data>/token.key`.
    public static func issue(pack: String, ttl: Int, account: String?, secret: String?, dataDirectory: String) throws -> String {
        guard Identifiers.isValidPackID(pack) else { throw ConfigurationError(option: "pack", "\"\(pack)\" is not a pack ID") }
        let key: [UInt8]
        do {
            key = try TokenKey.load(secret: secret, dataDirectory: dataDirectory)
        } catch {
            throw ConfigurationError(option: secret == nil ? "data" : "token-secret", error.description)
        }
        let claims = DownloadTokenClaims(pack: pack, originalTransactionID: "grant:operator", account: account,
                                         expires: Int64(Date().timeIntervalSince1970) + Int64(ttl))
        return DownloadTokenAuthority(key: key).issue(claims)
    }
}
