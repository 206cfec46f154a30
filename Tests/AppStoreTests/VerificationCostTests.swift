import AppStore
import DepotCrypto
import Foundation
import Testing

/// Prints the CPU cost of one verification (the target is ≤ 1 ms). Asserts results, never time.
struct VerificationCostTests {
    @Test func costOfOneTransactionVerification() throws {
        let jws = try Fixtures.text(RealAppleJWSTests.transactionFile)
        let root = try Fixtures.appleRoot()
        let clock = ContinuousClock()

        let coldRuns = 20
        let cold = clock.measure {
            for _ in 0..<coldRuns {  // a fresh verifier has an empty chain cache
                let verifier = SignedDataVerifier(trustedRoots: [root], bundleID: "com.goodheartapp", allowSandbox: true)
                #expect((try? verifier.verifyTransaction(jws, now: Fixtures.collectionDay).get()) != nil)
            }
        }

        let verifier = SignedDataVerifier(trustedRoots: [root], bundleID: "com.goodheartapp", allowSandbox: true)
        _ = verifier.verifyTransaction(jws, now: Fixtures.collectionDay)
        let warmRuns = 300
        let warm = clock.measure {
            for _ in 0..<warmRuns {
                #expect((try? verifier.verifyTransaction(jws, now: Fixtures.collectionDay).get()) != nil)
            }
        }
        print("SignedDataVerifier cost per verification (this build): "
              + "cold \(microseconds(cold / coldRuns)) µs, with cached chain \(microseconds(warm / warmRuns)) µs")
    }

    private func microseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
    }
}
