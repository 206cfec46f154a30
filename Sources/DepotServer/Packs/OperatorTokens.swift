public import ArgumentParsing
import DepotCore
import DepotCrypto
import Foundation
public import Ledger

/// Tokens issued by an operator (`depot token`): support grants and testing.
public enum OperatorTokens {
    /// Why a token cannot be issued for a pack.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// A token for `pack`, valid `ttl` seconds, signed with the key the servers use: the configured secret;
    /// else, with a PostgreSQL `ledger`, the key kept in the database; else the server's existing
    /// `<data>/token.key`. With `contentDirectory`, a pack that is not there is refused.
    public static func issue(pack: String, ttl: Int, account: String?, secret: String?, dataDirectory: String,
                             contentDirectory: String? = nil, ledger: LedgerLocation) async throws -> String {
        guard secret == nil else {
            return try issue(pack: pack, ttl: ttl, account: account, secret: secret, dataDirectory: dataDirectory,
                             contentDirectory: contentDirectory)
        }
        try check(pack, contentDirectory: contentDirectory)
        let key: [UInt8]?
        do {
            key = try await Ledger.tokenKey(at: ledger, generate: { SecureRandom.bytes(32) })
        } catch {
            throw ConfigurationError(option: "ledger", DepotApp.oneLine(error))
        }
        guard let key else {
            return try issue(pack: pack, ttl: ttl, account: account, secret: nil, dataDirectory: dataDirectory,
                             contentDirectory: contentDirectory)
        }
        return issue(pack: pack, ttl: ttl, account: account, key: key)
    }

    /// A token for `pack`, valid `ttl` seconds, signed with the configured secret or the server's existing
    /// `<data>/token.key` (never a new key: nothing would accept its tokens). With `contentDirectory`, a pack that is
    /// not there is refused.
    public static func issue(pack: String, ttl: Int, account: String?, secret: String?, dataDirectory: String,
                             contentDirectory: String? = nil) throws -> String {
        try check(pack, contentDirectory: contentDirectory)
        let key: [UInt8]
        do {
            key = try TokenKey.load(secret: secret, dataDirectory: dataDirectory, create: false)
        } catch {
            throw ConfigurationError(option: secret == nil ? "data" : "token-secret", error.description)
        }
        return issue(pack: pack, ttl: ttl, account: account, key: key)
    }

    private static func check(_ pack: String, contentDirectory: String?) throws {
        guard Identifiers.isValidPackID(pack) else { throw ConfigurationError(option: "pack", "\"\(pack)\" is not a pack ID") }
        if let contentDirectory {
            let content = ContentIndex.load(contentDirectory: contentDirectory, displayPrefix: contentDirectory, cache: ManifestCache())
            guard content.packs[pack] != nil else {
                throw Refusal(description: "no pack \"\(pack)\" in \(contentDirectory) (packs there: "
                    + (content.packs.keys.sorted().joined(separator: ", ").nonEmpty ?? "none") + ")")
            }
        }
    }

    private static func issue(pack: String, ttl: Int, account: String?, key: [UInt8]) -> String {
        let claims = DownloadTokenClaims(pack: pack, originalTransactionID: "grant:operator", account: account,
                                         expires: Int64(Date().timeIntervalSince1970) + Int64(ttl))
        return DownloadTokenAuthority(key: key).issue(claims)
    }
}

extension String {
    /// nil for the empty string.
    var nonEmpty: String? { isEmpty ? nil : self }
}
