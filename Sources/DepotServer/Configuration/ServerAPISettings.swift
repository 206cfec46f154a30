import AppStore
public import ArgumentParsing
public import Foundation

/// The App Store Server API part of the configuration, checked (spec app-store-server-api §1): the key
/// file, its ID and the issuer come together or not at all, the file must hold an EC P-256 PKCS#8 key,
/// and `--receipt-validation server-api` needs them. Errors name the option and never quote the key.
public struct ServerAPISettings: Sendable {
    /// The loaded In-App Purchase key; nil when none is configured (the API is not used).
    let key: ServerAPIKey?
    /// Whether legacy receipts go through the Server API (else `verifyReceipt`).
    public let validatesReceipts: Bool

    /// True when a key is configured: restore (`"history": true`), Apple's latest subscription state and
    /// the notification catch-up are available.
    public var hasKey: Bool { key != nil }

    /// Checks the options and reads the key file (a small file read: call it at start-up or in a command,
    /// not on an event loop).
    public static func resolve(_ configuration: DepotConfiguration) throws(ConfigurationError) -> ServerAPISettings {
        let parts: [(option: String, value: String?)] = [
            ("apple-api-key", configuration.appleAPIKeyFile), ("apple-api-key-id", configuration.appleAPIKeyID),
            ("apple-api-issuer", configuration.appleAPIIssuer),
        ]
        let given = parts.filter { $0.value != nil }
        var key: ServerAPIKey?
        if !given.isEmpty {
            if let missing = parts.first(where: { $0.value == nil }) {
                throw ConfigurationError(option: missing.option,
                                         "missing: --apple-api-key, --apple-api-key-id and --apple-api-issuer come together (\(given.map { "--" + $0.option }.joined(separator: ", ")) given)")
            }
            do {
                key = try ServerAPIKey.load(path: configuration.appleAPIKeyFile!, keyID: configuration.appleAPIKeyID!,
                                            issuerID: configuration.appleAPIIssuer!)
            } catch {
                switch error {
                case .unreadableFile, .invalidKey: throw ConfigurationError(option: "apple-api-key", error.description)
                case .invalidKeyID: throw ConfigurationError(option: "apple-api-key-id", error.description)
                case .invalidIssuerID: throw ConfigurationError(option: "apple-api-issuer", error.description)
                }
            }
        }
        let validatesReceipts: Bool
        switch configuration.receiptValidation {
        case .auto: validatesReceipts = key != nil
        case .verifyReceipt: validatesReceipts = false
        case .serverAPI:
            guard key != nil else {
                throw ConfigurationError(option: "receipt-validation",
                                         "server-api needs an In-App Purchase key (--apple-api-key, --apple-api-key-id, --apple-api-issuer)")
            }
            validatesReceipts = true
        }
        if configuration.consumptionInfo.isOn, key == nil {
            throw ConfigurationError(option: "consumption-info",
                                     "on needs an In-App Purchase key to answer Apple (--apple-api-key, --apple-api-key-id, --apple-api-issuer)")
        }
        return ServerAPISettings(key: key, validatesReceipts: validatesReceipts)
    }

    /// The API client for this configuration, calling through `verifier` (the server's JWS verifier) and
    /// reporting each call to `observer`; nil without a key.
    func client(_ configuration: DepotConfiguration, verifier: SignedDataVerifier,
                observer: ServerAPIClient.CallObserver?, executor: (any TaskExecutor)?) -> ServerAPIClient? {
        guard let key else { return nil }
        let api = ServerAPIConfiguration(productionURL: configuration.appleAPIURL, sandboxURL: configuration.appleAPISandboxURL,
                                         bundleID: configuration.bundleID, appAppleID: configuration.appleAppID,
                                         allowSandbox: configuration.allowSandbox, timeout: configuration.appleTimeout)
        return ServerAPIClient(configuration: api, key: key, verifier: verifier, observer: observer, executor: executor)
    }
}
