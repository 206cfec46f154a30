public import ArgumentParsing
public import Foundation
public import Ledger

/// Everything `depot serve` can be told (spec §3). Each property is one declaration: its flag, its
/// `DEPOT_*` variable, default, parser and help, from which `--help` and the README's configuration table
/// are generated. Commands that need part of it take `@OptionGroup(only: ...)`.
public struct DepotConfiguration: ParsableOptions {
    @Setting("host", .nonEmptyText, help: "listen address (IPv4 or IPv6 literal)", valueName: "ADDRESS")
    public var host = "127.0.0.1"
    @Setting("port", .integer(in: 0...65535), help: "listen port; `0` picks a free one and prints `listening on http://HOST:PORT`",
             valueName: "PORT")
    public var port = 8080
    @Setting("catalog", .directory, help: "catalog directory")
    public var catalogDirectory = "./catalog"
    @Setting("content", .directory, help: "content directory")
    public var contentDirectory = "./content"
    @Setting("data", .directory, help: "runtime data: `ledger.sqlite`, `token.key`")
    public var dataDirectory = "./var"
    @Setting("bundle-id", .nonEmptyText, help: "receipts and JWS for another bundle are rejected", valueName: "ID")
    public var bundleID = "com.example.depot"
    @Setting("apple-verify-url", .httpURL, help: "production `verifyReceipt`")
    public var appleVerifyURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    @Setting("apple-sandbox-verify-url", .httpURL, help: "sandbox `verifyReceipt`")
    public var appleSandboxVerifyURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!
    @Setting("apple-shared-secret", help: "sent as `password`; authenticates V1 notifications", valueName: "SECRET")
    public var appleSharedSecret: String?
    /// Files of trusted roots for JWS chains; nil means the Apple Root CA - G3 shipped with Depot.
    @Setting("apple-root-certs", .commaSeparated, help: "comma-separated DER/PEM files trusted for JWS chains", valueName: "FILES",
             defaultText: "Apple Root CA - G3 (built in)")
    public var appleRootCertificateFiles: [String]?
    @Setting("allow-sandbox", help: "accept sandbox purchases")
    public var allowSandbox = true
    @Setting("token-secret", .text(minimumLength: 32),
             help: "HMAC key for download tokens (≥ 32 characters); share it between replicas", valueName: "SECRET",
             defaultText: "`<data>/token.key`")
    public var tokenSecret: String?
    @Setting("token-ttl", .integer(in: 1...(86_400 * 365)), help: "download token lifetime, seconds", valueName: "SECONDS")
    public var tokenTTL = 3600
    @Setting("account-policy", help: "a purchase presented by a second account")
    public var accountPolicy = AccountPolicy.transfer
    @Setting("admin-token", .text(minimumLength: 16), help: "bearer token for `/admin/...` (≥ 16 characters)", valueName: "TOKEN",
             defaultText: "none (admin API off)")
    public var adminToken: String?
    @Setting("webhook-url", .httpURL, help: "the studio's backend: one signed POST per purchase and pack event", valueName: "URL",
             defaultText: "none (no webhooks)")
    public var webhookURL: URL?
    @Setting("webhook-secret", .text(minimumLength: 32), help: "HMAC key of `Depot-Signature` (≥ 32 characters; with `--webhook-url`)",
             valueName: "SECRET", defaultText: "none")
    public var webhookSecret: String?
    @Setting("delivery-record", help: "record which chunks each purchase was sent (`off` only to measure its cost)")
    public var deliveryRecord = Toggle.on
    @Setting("delivery-record-interval", .integer(in: 1...3600),
             help: "seconds between the delivery record's writes (what was sent meanwhile is written at `SIGTERM` too)", valueName: "SECONDS")
    public var deliveryRecordInterval = 1
    @Setting("catalog-max-age", .integer(in: 0...(86_400 * 365)), help: "`max-age` of the product lists; `0` is `no-cache`",
             valueName: "SECONDS")
    public var catalogMaxAge = 0
    @Setting("access-log", help: "one line per request on stderr")
    public var accessLog = Toggle.on
    @Setting("log-format", help: "how log lines on stderr look (`json` is one object per line)")
    public var logFormat = LogFormat.text
    @Setting("ops-listen", .listenAddress, help: "a second listener for `/metrics`, the detailed `/healthz` and `/admin/`",
             valueName: "HOST:PORT", defaultText: "none (all on the public port)")
    public var opsListen: ListenAddress?
    @Setting("trusted-proxies", .addressBlocks,
             help: "peers believed about the client (`X-Forwarded-For`, `Forwarded`) and `X-Request-ID`", valueName: "CIDR,...",
             defaultText: "none")
    public var trustedProxies: [AddressBlock] = []
    @Setting("apple-timeout", .seconds, help: "seconds before a call to Apple counts as failed")
    public var appleTimeout: Double = 10
    @Setting("apple-api-key", help: "In-App Purchase key file (`SubscriptionKey_<KEYID>.p8`: PKCS#8 PEM, EC P-256)", valueName: "FILE")
    public var appleAPIKeyFile: String?
    @Setting("apple-api-key-id", help: "the In-App Purchase key's ID", valueName: "ID")
    public var appleAPIKeyID: String?
    @Setting("apple-api-issuer", help: "the issuer ID of the key (a UUID)", valueName: "UUID")
    public var appleAPIIssuer: String?
    @Setting("apple-app-id", .integer(in: Int64(1)...Int64.max),
             help: "the app's numeric Apple ID; Production data that carries an `appAppleId` must carry this one", valueName: "N")
    public var appleAppID: Int64?
    @Setting("apple-api-url", .httpURL, help: "App Store Server API, production")
    public var appleAPIURL = URL(string: "https://api.storekit.apple.com")!
    @Setting("apple-api-sandbox-url", .httpURL, help: "App Store Server API, sandbox")
    public var appleAPISandboxURL = URL(string: "https://api.storekit-sandbox.apple.com")!
    @Setting("receipt-validation", help: "who validates legacy receipts (`auto`: the Server API when a key is configured, else `verifyReceipt`)")
    public var receiptValidation = ReceiptValidationMode.auto
    @Setting("notification-sync", .integer(in: 0...(86_400 * 365)),
             help: "seconds between catch-up syncs of notification history; `0` turns it off", valueName: "SECONDS")
    public var notificationSync = 3600
    @Setting("consumption-info",
             help: "`on`: answer `CONSUMPTION_REQUEST` notifications (the operator states the app has the customer's consent, which Apple requires)")
    public var consumptionInfo = Toggle.off
    @Setting("header-timeout", .seconds, help: "seconds to receive a request head")
    public var headerTimeout: Double = 10
    @Setting("idle-timeout", .seconds, help: "seconds a keep-alive connection may sit idle")
    public var idleTimeout: Double = 60
    @Setting("write-timeout", .seconds, help: "seconds a response may make no progress")
    public var writeTimeout: Double = 60
    @Setting("body-budget", .integer(in: 1...1_048_576),
             help: "MiB of request bodies buffered at once over all connections; a request that would pass it gets `503` with `Retry-After` before its body is read",
             valueName: "MIB")
    public var bodyBudget = 64
    @Setting("body-min-rate", .integer(in: 0...(1 << 30)),
             help: "slowest a request body may arrive, bytes per second over each 10 s; slower is cut with `408`; `0` is no minimum",
             valueName: "BYTES")
    public var bodyMinimumRate = 1024
    @Setting("loops", .integer(in: 0...256), help: "event-loop threads; `0` is one per core")
    public var loops = 0
    @Setting("ledger", help: "`sqlite` (`<data>/ledger.sqlite`), `sqlite:PATH`, or `postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?PARAMS]` shared by every instance",
             valueName: "LOCATION")
    public var ledger = LedgerLocation.sqlite(path: nil)
    @Setting("ledger-pool", .integer(in: 1...64), help: "PostgreSQL connections per instance")
    public var ledgerPool = 8
    @Setting("ledger-stale-max", .seconds,
             help: "seconds pack downloads are still served from the last ledger state confirmed while PostgreSQL is away")
    public var ledgerStaleMax: Double = 300
    @Setting("edge-secret", .text(minimumLength: 32),
             help: "the nginx edge's key to the origin route that fills its cache (≥ 32 characters; `depot edge-config nginx`)",
             valueName: "SECRET", defaultText: "none (origin route off)")
    public var edgeSecret: String?

    /// Every setting at its default.
    public init() {}

    /// The three directories together.
    public var paths: DepotPaths {
        get { DepotPaths(catalogDirectory: catalogDirectory, contentDirectory: contentDirectory, dataDirectory: dataDirectory) }
        set {
            catalogDirectory = newValue.catalogDirectory
            contentDirectory = newValue.contentDirectory
            dataDirectory = newValue.dataDirectory
        }
    }

    /// `Cache-Control` of the product lists.
    public var listCacheControl: String {
        catalogMaxAge == 0 ? "public, no-cache" : "public, max-age=\(catalogMaxAge)"
    }
}
