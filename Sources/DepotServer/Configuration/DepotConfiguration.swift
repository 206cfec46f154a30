import DepotCore
public import Foundation

/// Everything `depot serve` can be told (spec §3), validated.
public struct DepotConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var paths = DepotPaths(catalogDirectory: "./catalog", contentDirectory: "./content", dataDirectory: "./var")
    public var bundleID = "com.example.depot"
    public var appleVerifyURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    public var appleSandboxVerifyURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!
    public var appleSharedSecret: String?
    /// Files of trusted roots for JWS chains; nil means the Apple Root CA - G3 shipped with Depot.
    public var appleRootCertificateFiles: [String]?
    public var allowSandbox = true
    public var tokenSecret: String?
    public var tokenTTL = 3600
    public var accountPolicy = "transfer"
    public var adminToken: String?
    public var catalogMaxAge = 0
    public var accessLog = true
    public var appleTimeout: Double = 10
    public var headerTimeout: Double = 10
    public var idleTimeout: Double = 60
    public var writeTimeout: Double = 60
    /// Event loops; 0 means one per core.
    public var loops = 0

    public init() {}

    /// The options of `depot serve`, in `--help` order.
    public static let serveOptions: [OptionSpec] = [
        OptionSpec("host", default: "127.0.0.1", "listen address", valueName: "ADDRESS"),
        OptionSpec("port", default: "8080", "listen port (0 = pick a free one and print it)", valueName: "PORT"),
        OptionSpec("catalog", default: "./catalog", "catalog directory", valueName: "DIR"),
        OptionSpec("content", default: "./content", "content directory", valueName: "DIR"),
        OptionSpec("data", default: "./var", "runtime data directory (ledger, token key)", valueName: "DIR"),
        OptionSpec("bundle-id", default: "com.example.depot", "the app's bundle ID; receipts and JWS for another bundle are rejected", valueName: "ID"),
        OptionSpec("apple-verify-url", default: "https://buy.itunes.apple.com/verifyReceipt", "production verifyReceipt endpoint", valueName: "URL"),
        OptionSpec("apple-sandbox-verify-url", default: "https://sandbox.itunes.apple.com/verifyReceipt", "sandbox verifyReceipt endpoint", valueName: "URL"),
        OptionSpec("apple-shared-secret", default: nil, "sent as `password`; also authenticates V1 notifications (default: none)", valueName: "SECRET"),
        OptionSpec("apple-root-certs", default: nil, "comma-separated DER/PEM files trusted for JWS chains (default: the shipped Apple Root CA - G3)", valueName: "FILES"),
        OptionSpec("allow-sandbox", default: "true", "accept sandbox purchases", isBoolean: true, valueName: "BOOL"),
        OptionSpec("token-secret", default: nil, "HMAC key for download tokens, at least 32 characters (default: <data>/token.key)", valueName: "SECRET"),
        OptionSpec("token-ttl", default: "3600", "download token lifetime, seconds", valueName: "SECONDS"),
        OptionSpec("account-policy", default: "transfer", "a purchase presented by a second account: transfer, first or shared", valueName: "POLICY"),
        OptionSpec("admin-token", default: nil, "bearer token for /admin/... (default: admin API off)", valueName: "TOKEN"),
        OptionSpec("catalog-max-age", default: "0", "max-age for the product lists (0 = no-cache)", valueName: "SECONDS"),
        OptionSpec("access-log", default: "on", "on: one line per request on stderr; off", valueName: "on|off"),
        OptionSpec("apple-timeout", default: "10", "seconds before a call to Apple counts as failed", valueName: "SECONDS"),
        OptionSpec("header-timeout", default: "10", "seconds to receive a request's head", valueName: "SECONDS"),
        OptionSpec("idle-timeout", default: "60", "seconds a keep-alive connection may sit idle", valueName: "SECONDS"),
        OptionSpec("write-timeout", default: "60", "seconds a response may make no progress", valueName: "SECONDS"),
        OptionSpec("loops", default: "0", "event loop threads (0 = one per core)", valueName: "N"),
    ]

    /// Validates resolved values. Throws with the first unusable option.
    public init(_ values: OptionValues) throws(ConfigurationError) {
        host = values.string("host") ?? host
        port = try values.int("port", range: 0...65535)
        paths = DepotPaths(catalogDirectory: Self.trimSlash(values.string("catalog") ?? "./catalog"),
                           contentDirectory: Self.trimSlash(values.string("content") ?? "./content"),
                           dataDirectory: Self.trimSlash(values.string("data") ?? "./var"))
        bundleID = values.string("bundle-id") ?? bundleID
        guard !bundleID.isEmpty else { throw ConfigurationError(option: "bundle-id", "must not be empty") }
        appleVerifyURL = try Self.url(values, "apple-verify-url")
        appleSandboxVerifyURL = try Self.url(values, "apple-sandbox-verify-url")
        appleSharedSecret = values.string("apple-shared-secret").flatMap { $0.isEmpty ? nil : $0 }
        if let roots = values.string("apple-root-certs"), !roots.isEmpty {
            appleRootCertificateFiles = roots.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        allowSandbox = try values.bool("allow-sandbox")
        tokenSecret = values.string("token-secret").flatMap { $0.isEmpty ? nil : $0 }
        if let secret = tokenSecret, secret.utf8.count < 32 {
            throw ConfigurationError(option: "token-secret", "must be at least 32 characters")
        }
        tokenTTL = try values.int("token-ttl", range: 1...(86_400 * 365))
        accountPolicy = values.string("account-policy") ?? accountPolicy
        guard ["transfer", "first", "shared"].contains(accountPolicy) else {
            throw ConfigurationError(option: "account-policy", "\"\(accountPolicy)\" is not one of transfer, first, shared")
        }
        adminToken = values.string("admin-token").flatMap { $0.isEmpty ? nil : $0 }
        if let token = adminToken, token.utf8.count < 16 {
            throw ConfigurationError(option: "admin-token", "must be at least 16 characters")
        }
        catalogMaxAge = try values.int("catalog-max-age", range: 0...(86_400 * 365))
        switch values.string("access-log")?.lowercased() {
        case "on", "true", "1", "yes": accessLog = true
        case "off", "false", "0", "no": accessLog = false
        default: throw ConfigurationError(option: "access-log", "\"\(values.string("access-log") ?? "")\" is not on or off")
        }
        appleTimeout = try values.seconds("apple-timeout")
        headerTimeout = try values.seconds("header-timeout")
        idleTimeout = try values.seconds("idle-timeout")
        writeTimeout = try values.seconds("write-timeout")
        loops = try values.int("loops", range: 0...256)
    }

    /// `Cache-Control` of the product lists.
    public var listCacheControl: String {
        catalogMaxAge == 0 ? "public, no-cache" : "public, max-age=\(catalogMaxAge)"
    }

    private static func url(_ values: OptionValues, _ name: String) throws(ConfigurationError) -> URL {
        guard let text = values.string(name), let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "https" || scheme == "http", url.host != nil else {
            throw ConfigurationError(option: name, "\"\(values.string(name) ?? "")\" is not an http(s) URL")
        }
        return url
    }

    private static func trimSlash(_ path: String) -> String {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        return p
    }
}

extension DepotConfiguration {
    /// The section 3 options a command that works on the files (publish, check, ...) takes.
    public static func options(_ names: [String]) -> [OptionSpec] {
        names.map { name in serveOptions.first { $0.name == name }! }
    }
}
