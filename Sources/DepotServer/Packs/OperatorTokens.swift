import ArgumentParsing
import DepotCore
import Foundation

/// Tokens issued by an operator (`depot token`): support grants and testing.
public enum OperatorTokens {
    /// Why a token cannot be issued for a pack.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// A token for `pack`, valid `ttl` seconds, signed with the configured secret or the server's existing
    /// `<data>/token.key` (never a new key: nothing would accept its tokens). With `contentDirectory`, a pack that is
    /// not there is refused.
    public static func issue(pack: String, ttl: Int, account: String?, secret: String?, dataDirectory: String,
                             contentDirectory: String? = nil) throws -> String {
        guard Identifiers.isValidPackID(pack) else { throw ConfigurationError(option: "pack", "\"\(pack)\" is not a pack ID") }
        if let contentDirectory {
            let content = ContentIndex.load(contentDirectory: contentDirectory, displayPrefix: contentDirectory, cache: ManifestCache())
            guard content.packs[pack] != nil else {
                throw Refusal(description: "no pack \"\(pack)\" in \(contentDirectory) (packs there: "
                    + (content.packs.keys.sorted().joined(separator: ", ").nonEmpty ?? "none") + ")")
            }
        }
        let key: [UInt8]
        do {
            key = try TokenKey.load(secret: secret, dataDirectory: dataDirectory, create: false)
        } catch {
            throw ConfigurationError(option: secret == nil ? "data" : "token-secret", error.description)
        }
        let claims = DownloadTokenClaims(pack: pack, originalTransactionID: "grant:operator", account: account,
                                         expires: Int64(Date().timeIntervalSince1970) + Int64(ttl))
        return DownloadTokenAuthority(key: key).issue(claims)
    }
}

extension String {
    /// nil for the empty string.
    var nonEmpty: String? { isEmpty ? nil : self }
}
