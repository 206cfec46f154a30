import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation
import Testing

/// `--apple-app-id`: a Production notification that carries an `appAppleId` must carry the configured one
/// (check `app_id`); one that carries none is not checked.
struct AppAppleIDCheckTests {
    static let bundle = "com.example.depot"
    static let now = Date(timeIntervalSince1970: 1_795_946_400)

    static func notification(environment: String, appAppleId: Int64?) throws -> (String, TestPKI) {
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(86_400))
        var data: [String: Any] = ["bundleId": bundle, "environment": environment]
        data["appAppleId"] = appAppleId
        let payload: [String: Any] = ["notificationType": "REFUND", "notificationUUID": UUID().uuidString, "version": "2.0",
                                      "signedDate": Int64(now.timeIntervalSince1970 * 1000), "data": data]
        return (try TransactionSigner(pki: pki).sign(payload: payload), pki)
    }

    static func check(environment: String, carried: Int64?, configured: Int64?) throws -> VerificationCheck? {
        let (jws, pki) = try notification(environment: environment, appAppleId: carried)
        let verifier = SignedDataVerifier(trustedRoots: [pki.root], bundleID: bundle, allowSandbox: true, appAppleID: configured)
        switch verifier.verifyNotification(jws, now: now) {
        case .success: return nil
        case .failure(let failure): return failure.check ?? .format
        }
    }

    @Test func productionNotificationsAreHeldToTheAppAppleID() throws {
        #expect(try Self.check(environment: "Production", carried: 1234, configured: 1234) == nil)
        #expect(try Self.check(environment: "Production", carried: 1235, configured: 1234) == .app_id)
        #expect(try Self.check(environment: "Production", carried: nil, configured: 1234) == nil)
        #expect(try Self.check(environment: "Production", carried: 1235, configured: nil) == nil)
    }

    @Test func sandboxNotificationsAreNot() throws {
        #expect(try Self.check(environment: "Sandbox", carried: nil, configured: 1234) == nil)
        #expect(try Self.check(environment: "Sandbox", carried: 99, configured: 1234) == nil)
    }
}
