public import DepotCore
public import DepotCrypto
public import Foundation

/// Verifies App Store signed data: StoreKit 2 signed transactions and renewal infos, and App Store
/// Server Notification V2 `signedPayload`s (spec §4.2 `transactions`, §4.5).
///
/// Checks, in order (the first failure is reported as its `VerificationCheck`):
/// 1. `format`: three base64url segments; header and payload are JSON objects.
/// 2. `algorithm`: header `alg` is `ES256`. (`x5c` missing or not an array of strings: `format`.)
/// 3. `chain_length`: `x5c` holds exactly 3 certificates. The payload is then read as JSON
///    (`format`) for its `signedDate`.
/// 4. `certificate`: each is base64 DER of a certificate.
/// 5. `chain`: leaf `x5c[0]` and intermediate `x5c[1]` validate up to a configured root, at the
///    payload's `signedDate` (or `now` when it has none). `x5c[2]` is parsed but never trusted:
///    trust comes only from the configuration. The built path must be leaf → `x5c[1]` → root.
/// 6. `oid`: leaf carries `1.2.840.113635.100.6.11.1`, intermediate `1.2.840.113635.100.6.2.1`.
/// 7. `signature`: ES256 over the ASCII `header.payload` with the leaf key.
/// 8. `bundle`: the payload's bundle ID is the configured one (not for renewal info).
///    `app_id`: with an app Apple ID configured, a Production notification carries that one.
/// 9. `environment`: Production always; Sandbox only when allowed; Xcode, LocalTesting and
///    unknown values never.
///
/// Like Apple's `SignedDataVerifier`, the certificate policy (chain, then OIDs) runs before the
/// signature: a payload is only worth a signature check once its key is known to be Apple's. Any
/// change to the header or payload text still ends at `signature` (unless the change breaks the
/// JSON, which is `format`), since the chain inputs do not depend on the payload beyond
/// `signedDate`. The payload must be JSON before the chain check because `signedDate` picks the
/// validation time; it is authenticated by the signature check that follows.
///
/// Cost: a header seen before (the App Store reuses one per signing certificate) is recognised by
/// its exact text and skips checks 2–6 while the time is inside its chain's validity window, so a
/// typical verification is one P-256 signature check plus JSON decoding. The verifier is a value
/// type sharing one internal, lock-protected cache across copies; safe to use from any thread.
public struct SignedDataVerifier: Sendable {
    /// The extension Apple's App Store signing leaf certificates carry.
    public static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// The extension Apple's WWDR intermediate carries.
    public static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    /// Which time the certificate chain is validated at.
    public enum ChainValidationTime: Sendable {
        /// The payload's `signedDate` (falling back to `now`), as Apple's library does offline: leaf
        /// certificates rotate and expire while signed transactions stay valid.
        case signedDate
        /// Always `now` (what Apple's library does with online revocation checks on).
        case now
    }

    /// The bundle ID payloads must carry.
    public let bundleID: String
    /// Whether Sandbox payloads are accepted.
    public let allowSandbox: Bool
    /// The app's Apple ID (`--apple-app-id`): when set, Production notifications must carry it.
    public let appAppleID: Int64?
    /// Which time chains are validated at.
    public let chainValidationTime: ChainValidationTime
    private let chainVerifier: CertificateChainVerifier
    private let cache: VerifiedChainCache

    /// Creates a verifier trusting exactly `trustedRoots` (e.g. `AppleRootCertificates.rootCAG3()`).
    public init(trustedRoots: [X509Certificate], bundleID: String, allowSandbox: Bool, appAppleID: Int64? = nil,
                chainValidationTime: ChainValidationTime = .signedDate) {
        self.bundleID = bundleID
        self.allowSandbox = allowSandbox
        self.appAppleID = appAppleID
        self.chainValidationTime = chainValidationTime
        chainVerifier = CertificateChainVerifier(trustedRoots: trustedRoots)
        cache = VerifiedChainCache()
    }

    /// The configured trust anchors.
    public var trustedRoots: [X509Certificate] { chainVerifier.trustedRoots }

    /// How many JWS headers the chain cache remembers (tests).
    package var cachedHeaderCount: Int { cache.count }

    /// Verifies a StoreKit 2 signed transaction and decodes it.
    ///
    /// The payload is decoded once: when it decodes as a transaction, that transaction gives the facts the
    /// checks read (`signedDate`, `bundleId`, `environment`) and is returned once every check passed. A
    /// payload that does not decode goes the general way, so its failure is reported exactly as before
    /// (`format` before the signature when it is not JSON with the facts' types, `signature` when it was
    /// altered, `format` naming the missing field after the signature otherwise).
    public func verifyTransaction(_ jws: String, now: Date) -> Result<StoreKitTransaction, VerificationFailure> {
        Result { () throws(VerificationFailure) in
            let token = try CompactJWS(jws)
            if let transaction = try? JSONDecoder().decode(StoreKitTransaction.self, from: token.payload) {
                _ = try verify(token, kind: .transaction, now: now) { SignedPayloadFacts(transaction: transaction) }
                return transaction
            }
            return try decode(StoreKitTransaction.self, from: try verify(token, kind: .transaction, now: now), what: "transaction")
        }
    }

    /// Verifies a StoreKit 2 signed renewal info (environment only: it has no bundle ID) and decodes it.
    public func verifyRenewalInfo(_ jws: String, now: Date) -> Result<StoreKitRenewalInfo, VerificationFailure> {
        Result { () throws(VerificationFailure) in
            try decode(StoreKitRenewalInfo.self, from: try verify(jws, kind: .renewalInfo, now: now), what: "renewal info")
        }
    }

    /// Verifies a V2 notification `signedPayload` and decodes it. The nested
    /// `data.signedTransactionInfo` and `data.signedRenewalInfo` are verified with the same rules
    /// and returned decoded in `data.transactionInfo` / `data.renewalInfo`; a nested failure is
    /// reported with its own check and a detail naming the field. A notification for another app
    /// fails with `.invalid(.bundle, ...)` (the HTTP layer answers `400 wrong_bundle`).
    public func verifyNotification(_ signedPayload: String, now: Date) -> Result<StoreKitNotification, VerificationFailure> {
        Result { () throws(VerificationFailure) in
            let verified = try verify(signedPayload, kind: .notification, now: now)
            var notification = try decode(StoreKitNotification.self, from: verified, what: "notification")
            if let nested = notification.data?.signedTransactionInfo {
                notification.data?.transactionInfo = try nestedResult(verifyTransaction(nested, now: now),
                                                                     field: "data.signedTransactionInfo")
            }
            if let nested = notification.data?.signedRenewalInfo {
                notification.data?.renewalInfo = try nestedResult(verifyRenewalInfo(nested, now: now),
                                                                 field: "data.signedRenewalInfo")
            }
            return notification
        }
    }

    /// Runs every check for `kind` and returns the authenticated payload, undecoded.
    public func verifySignedData(_ jws: String, kind: SignedDataKind, now: Date) -> Result<VerifiedSignedData, VerificationFailure> {
        Result { () throws(VerificationFailure) in try verify(jws, kind: kind, now: now) }
    }

    // MARK: - The pipeline

    private func verify(_ jws: String, kind: SignedDataKind, now: Date) throws(VerificationFailure) -> VerifiedSignedData {
        let token = try CompactJWS(jws)
        return try verify(token, kind: kind, now: now)
    }

    /// The checks on a split token. `payloadFacts` gives the payload's facts when they are already known
    /// (nil: decoded here, where a payload that is not JSON fails `format`: after checks 2–3 for a header
    /// seen the first time).
    private func verify(_ token: CompactJWS, kind: SignedDataKind, now: Date,
                        payloadFacts: (() -> SignedPayloadFacts)? = nil) throws(VerificationFailure) -> VerifiedSignedData {
        func readFacts() throws(VerificationFailure) -> SignedPayloadFacts {
            if let payloadFacts { return payloadFacts() }
            return try SignedPayloadFacts.decode(token.payload)
        }
        let facts: SignedPayloadFacts
        let validationTime: Date
        let leaf: X509Certificate
        if let cached = cache.entry(forHeader: token.headerSegment) {
            // This exact header already passed checks 1–6; only the validation time may differ.
            facts = try readFacts()
            validationTime = self.validationTime(facts, now: now)
            leaf = try cached.chain.isValid(at: validationTime)
                ? cached.leaf
                : signingCertificate(try checkedX5C(token), at: validationTime, header: token.headerSegment)
        } else {
            let x5c = try checkedX5C(token)
            facts = try readFacts()
            validationTime = self.validationTime(facts, now: now)
            leaf = try signingCertificate(x5c, at: validationTime, header: token.headerSegment)
        }

        do {
            try ES256Verifier.verify(signature: token.signature, message: token.signingInput, publicKey: leaf.publicKey)
        } catch {
            throw .invalid(.signature, detail: error.description)
        }

        let bundleId = facts.bundleId(for: kind)
        if kind != .renewalInfo {
            // A notification without one is not a notification at all (a format problem), not one for another app.
            guard let bundleId else {
                throw kind == .notification ? .invalid(.format, detail: "the notification has no bundleId (in data, summary or externalPurchaseToken)")
                                            : .invalid(.bundle, detail: "payload has no bundleId")
            }
            guard bundleId == bundleID else {
                throw .invalid(.bundle, detail: "bundleId \"\(bundleId)\" is not \"\(bundleID)\"")
            }
        }
        let declaredEnvironment = facts.environment(for: kind)
        // Only Production data that carries an appAppleId is held to the app's Apple ID (spec §1; Sandbox data
        // may lack it, and Production data without one has nothing to compare).
        if let appAppleID, kind == .notification, declaredEnvironment == .production,
           let carried = facts.appAppleId(for: kind), carried != appAppleID {
            throw .invalid(.app_id, detail: "appAppleId \(carried) is not \(appAppleID)")
        }
        let environment = try acceptedEnvironment(declaredEnvironment)
        return VerifiedSignedData(payload: token.payload, signedDate: facts.signedDateValue,
                                  chainValidationTime: validationTime, environment: environment,
                                  bundleId: bundleId, signingCertificate: leaf)
    }

    /// Checks 2–3 (`algorithm`, `chain_length`; header damage is `format`) and returns `x5c`.
    private func checkedX5C(_ token: CompactJWS) throws(VerificationFailure) -> [String] {
        let header = try token.decodeHeader()
        guard header.alg == "ES256" else {
            throw .invalid(.algorithm, detail: "alg \(header.alg.map { "\"\($0)\"" } ?? "missing") is not ES256")
        }
        guard let x5c = header.x5c else { throw .invalid(.format, detail: "header has no x5c") }
        guard x5c.count == 3 else {
            throw .invalid(.chain_length, detail: "x5c holds \(x5c.count) certificates, not 3")
        }
        return x5c
    }

    private func validationTime(_ facts: SignedPayloadFacts, now: Date) -> Date {
        chainValidationTime == .signedDate ? (facts.signedDateValue ?? now) : now
    }

    /// Checks 4–6 (`certificate`, `chain`, `oid`); on success the header is cached with its chain.
    private func signingCertificate(_ x5c: [String], at time: Date,
                                    header: Data) throws(VerificationFailure) -> X509Certificate {
        var certificates: [X509Certificate] = []
        for (index, text) in x5c.enumerated() {
            guard let der = Data(base64Encoded: text) else {
                throw .invalid(.certificate, detail: "x5c[\(index)] is not base64")
            }
            do {
                certificates.append(try X509Certificate(der: Array(der)))
            } catch {
                throw .invalid(.certificate, detail: "x5c[\(index)]: \((error as? CryptoError)?.reason ?? "\(error)")")
            }
        }
        let leaf = certificates[0], intermediate = certificates[1]  // certificates[2] is never trusted

        let chain: VerifiedChain
        switch chainVerifier.verify(leaf: leaf, intermediates: [intermediate], at: time) {
        case .success(let verified):
            chain = verified
        case .failure(let error) where error.code < 0:
            throw .retryable(detail: "chain validation could not run: \(error.reason)")
        case .failure(let error):
            throw .invalid(.chain, detail: "x5c does not validate to a trusted root at \(time.formatted(.iso8601)): \(error)")
        }
        guard chain.certificates.count == 3, chain.certificates[1] === intermediate else {
            throw .invalid(.chain, detail: "the validated path does not run leaf → x5c[1] → root")
        }
        guard leaf.hasExtension(oid: Self.leafMarkerOID) else {
            throw .invalid(.oid, detail: "leaf lacks extension \(Self.leafMarkerOID)")
        }
        guard intermediate.hasExtension(oid: Self.intermediateMarkerOID) else {
            throw .invalid(.oid, detail: "intermediate lacks extension \(Self.intermediateMarkerOID)")
        }
        cache.store(VerifiedChainCache.Entry(leaf: leaf, chain: chain), forHeader: header)
        return leaf
    }

    private func acceptedEnvironment(_ environment: AppStoreEnvironment?) throws(VerificationFailure) -> AppStoreEnvironment {
        switch environment {
        case .production?:
            return .production
        case .sandbox? where allowSandbox:
            return .sandbox
        case .sandbox?:
            throw .invalid(.environment, detail: "Sandbox is not allowed")
        case .xcode?, .localTesting?:
            throw .invalid(.environment, detail: "\(environment!.rawValue) data is never accepted by a server")
        case let other?:
            throw .invalid(.environment, detail: "unknown environment \"\(other.rawValue)\"")
        case nil:
            throw .invalid(.environment, detail: "payload has no environment")
        }
    }

    private func decode<Model: Decodable>(_ type: Model.Type, from verified: VerifiedSignedData,
                                          what: String) throws(VerificationFailure) -> Model {
        do {
            return try JSONDecoder().decode(type, from: verified.payload)
        } catch let DecodingError.keyNotFound(key, _) {
            throw .invalid(.format, detail: "\(what) payload lacks \(key.stringValue)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw .invalid(.format, detail: "\(what) payload has a mistyped \(path)")
        } catch {
            throw .invalid(.format, detail: "\(what) payload does not decode")
        }
    }

    private func nestedResult<Model>(_ result: Result<Model, VerificationFailure>,
                                     field: String) throws(VerificationFailure) -> Model {
        switch result {
        case .success(let model): return model
        case .failure(.invalid(let check, let detail)): throw .invalid(check, detail: "\(field): \(detail)")
        case .failure(.retryable(let detail)): throw .retryable(detail: "\(field): \(detail)")
        }
    }
}
