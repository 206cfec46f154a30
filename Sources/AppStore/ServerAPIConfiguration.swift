public import DepotCore
public import Foundation

/// Where and how to call the App Store Server API (spec §1, §2).
public struct ServerAPIConfiguration: Sendable {
    /// `--apple-api-url`'s default.
    public static let defaultProductionURL = URL(string: "https://api.storekit.apple.com")!
    /// `--apple-api-sandbox-url`'s default.
    public static let defaultSandboxURL = URL(string: "https://api.storekit-sandbox.apple.com")!

    /// Production base URL (paths such as `/inApps/v2/history/…` are appended to it).
    public var productionURL: URL
    /// Sandbox base URL.
    public var sandboxURL: URL
    /// The app's bundle ID: the JWT's `bid`, and what answers and signed items must carry.
    public var bundleID: String
    /// The app's Apple ID (`--apple-app-id`): when set, Production answers carrying an `appAppleId`
    /// must carry this one.
    public var appAppleID: Int64?
    /// Whether the sandbox is asked (a transaction production does not know) and its data accepted.
    public var allowSandbox: Bool
    /// Seconds before one call counts as failed (`--apple-timeout`).
    public var timeout: Double
    /// Pause before the one retry, in seconds (under a second).
    public var retryBackoff: Double = 0.3
    /// A `429` whose `Retry-After` is this many seconds away or more is not retried (the backoff stays under it).
    public var longestRetryWait: Double = 1
    /// `Retry-After` seconds handed on when Apple gave none.
    public var defaultRetryAfter: Int = 5
    /// Pages of Get Transaction History read at most (spec §3: 100).
    public var maximumHistoryPages: Int = 100
    /// Pages of Get Notification History read at most per window.
    public var maximumNotificationPages: Int = 1_000

    /// A configuration with the given base URLs and checks.
    public init(productionURL: URL = defaultProductionURL, sandboxURL: URL = defaultSandboxURL, bundleID: String,
                appAppleID: Int64? = nil, allowSandbox: Bool, timeout: Double) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.allowSandbox = allowSandbox
        self.timeout = timeout
    }

    /// The base URL of `environment` (production for anything but sandbox).
    public func baseURL(for environment: AppStoreEnvironment) -> URL {
        environment == .sandbox ? sandboxURL : productionURL
    }
}
