import DepotCore
import Foundation

/// The few payload fields the verifier needs before and after the signature check: `signedDate`
/// for the chain validation time, and the bundle ID and environment for the app checks.
struct SignedPayloadFacts: Decodable {
    /// `data` or `summary` of a notification.
    struct AppData: Decodable {
        var bundleId: String?
        var environment: String?
        var appAppleId: Int64?
    }

    /// `externalPurchaseToken` of a notification.
    struct ExternalPurchaseToken: Decodable {
        var bundleId: String?
        var externalPurchaseId: String?
        var appAppleId: Int64?
    }

    /// Milliseconds since 1970, possibly fractional.
    var signedDate: Double?
    var bundleId: String?
    var environment: String?
    var data: AppData?
    var summary: AppData?
    var externalPurchaseToken: ExternalPurchaseToken?
    /// `signedDate` as an already decoded payload gave it (not decoded from JSON).
    private var knownSignedDate: Date?

    private enum CodingKeys: String, CodingKey {
        case signedDate, bundleId, environment, data, summary, externalPurchaseToken
    }

    /// The facts of a transaction payload already decoded (the same values a decoding of the facts gives).
    init(transaction: StoreKitTransaction) {
        knownSignedDate = transaction.signedDate
        bundleId = transaction.bundleId
        environment = transaction.environment.rawValue
    }

    /// Decodes the facts; a payload that is not a JSON object (or has mistyped fields) is `format`.
    static func decode(_ payload: Data) throws(VerificationFailure) -> SignedPayloadFacts {
        do {
            return try JSONDecoder().decode(SignedPayloadFacts.self, from: payload)
        } catch {
            throw .invalid(.format, detail: "payload is not a JSON object with the expected field types")
        }
    }

    /// `signedDate` as a Date.
    var signedDateValue: Date? { knownSignedDate ?? signedDate.map { Date(appStoreMilliseconds: $0) } }

    /// The bundle ID the app checks compare, by payload kind (nil: the kind has none, or it is missing).
    func bundleId(for kind: SignedDataKind) -> String? {
        switch kind {
        case .transaction: bundleId
        case .renewalInfo: nil
        case .notification: data?.bundleId ?? summary?.bundleId ?? externalPurchaseToken?.bundleId
        }
    }

    /// The app's Apple ID a notification carries (in `data`, `summary` or `externalPurchaseToken`);
    /// nil for the other kinds, which have none.
    func appAppleId(for kind: SignedDataKind) -> Int64? {
        guard kind == .notification else { return nil }
        return data?.appAppleId ?? summary?.appAppleId ?? externalPurchaseToken?.appAppleId
    }

    /// The environment by payload kind. An external purchase token has no environment field: its
    /// ID starts with "SANDBOX" in the sandbox (as Apple's library reads it).
    func environment(for kind: SignedDataKind) -> AppStoreEnvironment? {
        switch kind {
        case .transaction, .renewalInfo:
            return environment.map(AppStoreEnvironment.init(rawValue:))
        case .notification:
            if let value = data?.environment ?? summary?.environment { return AppStoreEnvironment(rawValue: value) }
            if let id = externalPurchaseToken?.externalPurchaseId {
                return id.hasPrefix("SANDBOX") ? .sandbox : .production
            }
            return nil
        }
    }
}
