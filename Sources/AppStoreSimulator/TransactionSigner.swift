import DepotCrypto
public import Foundation

/// Signs App Store payloads the way the App Store does: a compact JWS with header
/// `{"alg":"ES256","x5c":[leaf, intermediate, root]}` and a raw `R‖S` ES256 signature
/// (RFC 7515 §7.1, RFC 7518 §3.4), with a `TestPKI`'s leaf key.
public struct TransactionSigner: Sendable {
    /// Fields of a simulated StoreKit 2 transaction (wire names and values).
    public struct Transaction: Sendable {
        public var transactionId: String
        public var originalTransactionId: String
        public var bundleId: String
        public var productId: String
        public var purchaseDate: Date
        public var originalPurchaseDate: Date
        public var signedDate: Date
        /// "Consumable", "Non-Consumable", "Auto-Renewable Subscription", "Non-Renewing Subscription".
        public var type: String
        /// "Production", "Sandbox", "Xcode", "LocalTesting".
        public var environment: String
        public var expiresDate: Date?
        public var revocationDate: Date?
        /// 0 other, 1 app issue.
        public var revocationReason: Int?
        public var appAccountToken: String?
        public var quantity: Int
        public var inAppOwnershipType: String

        /// A transaction with sensible defaults: a Sandbox non-consumable bought once at `purchaseDate`.
        public init(transactionId: String, originalTransactionId: String? = nil, bundleId: String,
                    productId: String, purchaseDate: Date, originalPurchaseDate: Date? = nil,
                    signedDate: Date? = nil, type: String = "Non-Consumable", environment: String = "Sandbox",
                    expiresDate: Date? = nil, revocationDate: Date? = nil, revocationReason: Int? = nil,
                    appAccountToken: String? = nil, quantity: Int = 1, inAppOwnershipType: String = "PURCHASED") {
            self.transactionId = transactionId
            self.originalTransactionId = originalTransactionId ?? transactionId
            self.bundleId = bundleId
            self.productId = productId
            self.purchaseDate = purchaseDate
            self.originalPurchaseDate = originalPurchaseDate ?? purchaseDate
            self.signedDate = signedDate ?? purchaseDate
            self.type = type
            self.environment = environment
            self.expiresDate = expiresDate
            self.revocationDate = revocationDate
            self.revocationReason = revocationReason
            self.appAccountToken = appAccountToken
            self.quantity = quantity
            self.inAppOwnershipType = inAppOwnershipType
        }

        /// The JSON payload object (dates as integer milliseconds, as Apple sends them).
        public var jsonObject: [String: Any] {
            var object: [String: Any] = [
                "transactionId": transactionId, "originalTransactionId": originalTransactionId,
                "bundleId": bundleId, "productId": productId,
                "purchaseDate": milliseconds(purchaseDate), "originalPurchaseDate": milliseconds(originalPurchaseDate),
                "signedDate": milliseconds(signedDate), "type": type, "environment": environment,
                "quantity": quantity, "inAppOwnershipType": inAppOwnershipType,
                "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441",
            ]
            object["expiresDate"] = expiresDate.map(milliseconds)
            object["revocationDate"] = revocationDate.map(milliseconds)
            object["revocationReason"] = revocationReason
            object["appAccountToken"] = appAccountToken
            return object
        }
    }

    /// V2 notification types the simulator sends.
    public enum NotificationType: String, Sendable, CaseIterable {
        case refund = "REFUND"
        case revoke = "REVOKE"
        case refundReversed = "REFUND_REVERSED"
        case test = "TEST"
        /// The customer asked for a refund; Apple asks the developer for consumption information.
        case consumptionRequest = "CONSUMPTION_REQUEST"
    }

    /// The PKI whose leaf signs.
    public let pki: TestPKI
    /// The base64url header of every JWS with the real shape (`alg` ES256, `x5c` of `pki`), made once:
    /// the store signs every answer with it.
    private let standardHeaderSegment: String?

    /// A signer for `pki`.
    public init(pki: TestPKI) {
        self.pki = pki
        standardHeaderSegment = try? Self.headerSegment(alg: "ES256", x5c: pki.x5c)
    }

    /// Signs a JSON object payload.
    public func sign(payload: [String: Any]) throws -> String {
        try sign(payloadJSON: Array(JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])))
    }

    /// Signs a payload written by the store's own JSON writer.
    func sign(_ payload: SimulatedJSON) throws -> String {
        try sign(payloadJSON: payload.bytes)
    }

    /// Signs an `Encodable` payload (encoded with default `JSONEncoder` settings).
    public func sign(_ payload: some Encodable) throws -> String {
        try sign(payloadJSON: Array(JSONEncoder().encode(payload)))
    }

    /// Signs raw payload bytes. `x5c` and `alg` default to the real shape; tests override them to
    /// build malformed tokens (which are still correctly signed).
    public func sign(payloadJSON: [UInt8], x5c: [String]? = nil, alg: String = "ES256") throws -> String {
        let header: String
        if x5c == nil, alg == "ES256", let standardHeaderSegment {
            header = standardHeaderSegment
        } else {
            header = try Self.headerSegment(alg: alg, x5c: x5c ?? pki.x5c)
        }
        let signingInput = header + "." + Self.base64URL(payloadJSON)
        let signature = try pki.leafKey.signES256(Array(signingInput.utf8))
        return signingInput + "." + Self.base64URL(signature)
    }

    /// The base64url of the header `{"alg":…,"x5c":[…]}` (sorted keys, slashes unescaped).
    static func headerSegment(alg: String, x5c: [String]) throws -> String {
        base64URL(Array(try JSONSerialization.data(withJSONObject: ["alg": alg, "x5c": x5c], options: [.sortedKeys, .withoutEscapingSlashes])))
    }

    /// A signed transaction (`JWSTransaction`).
    public func signedTransaction(_ transaction: Transaction) throws -> String {
        try sign(payload: transaction.jsonObject)
    }

    /// A signed V2 notification (`signedPayload`). With `transaction`, `data.signedTransactionInfo`
    /// carries it signed by the same PKI; `data.bundleId`/`environment` default to the transaction's;
    /// `data.appAppleId` is there only when `appAppleId` is given.
    public func signedNotification(_ type: NotificationType, subtype: String? = nil,
                                   notificationUUID: String = UUID().uuidString.lowercased(),
                                   transaction: Transaction?, bundleId: String? = nil,
                                   environment: String? = nil, appAppleId: Int64? = nil, signedDate: Date) throws -> String {
        var data: [String: Any] = [
            "bundleId": bundleId ?? transaction?.bundleId ?? "",
            "environment": environment ?? transaction?.environment ?? "Sandbox",
            "bundleVersion": "1",
        ]
        data["appAppleId"] = appAppleId
        if let transaction { data["signedTransactionInfo"] = try signedTransaction(transaction) }
        var payload: [String: Any] = [
            "notificationType": type.rawValue, "notificationUUID": notificationUUID,
            "version": "2.0", "signedDate": milliseconds(signedDate), "data": data,
        ]
        payload["subtype"] = subtype
        return try sign(payload: payload)
    }

    /// Unpadded base64url (RFC 4648 §5): standard base64 with `-` for `+`, `_` for `/` and no `=`,
    /// mapped byte by byte (`replacingOccurrences` goes through `NSString` and was most of the signing time).
    static func base64URL(_ bytes: [UInt8]) -> String {
        let standard = Data(bytes).base64EncodedData()
        var url: [UInt8] = []
        url.reserveCapacity(standard.count)
        for byte in standard {
            switch byte {
            case UInt8(ascii: "+"): url.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): url.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: url.append(byte)
            }
        }
        return String(decoding: url, as: UTF8.self)
    }
}

/// App Store time: integer milliseconds since 1970.
private func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
}
