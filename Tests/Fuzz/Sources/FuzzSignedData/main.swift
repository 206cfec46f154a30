import AppStore
import DepotCrypto
import Foundation
import FuzzSupport

/// StoreKit 2 signed data: the compact JWS, its header and `x5c` chain, the payload's JSON — through the
/// public verifier, trusting Apple's root and the test CA the seeds were signed with; and the certificate
/// parser on raw bytes.
private let roots: [X509Certificate] = {
    let here = URL(fileURLWithPath: #filePath)
    let testCA = here.deletingLastPathComponent().appendingPathComponent("../../../AppStoreTests/Fixtures/apple-library/certs/testCA.der")
    var roots = [AppleRootCertificates.rootCAG3()]
    if let der = try? Data(contentsOf: testCA.standardizedFileURL), let certificates = try? X509Certificate.parsePEMOrDER(Array(der)) {
        roots += certificates
    }
    return roots
}()

private let now = Date(timeIntervalSince1970: 1_700_000_000)

func fuzzSignedData(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(start, count)
    let choice = input.byte()
    let rest = input.rest
    // A verifier per input, each input verified twice (the second time through the verifier's cache of checked
    // headers): the cache lives only as long as the input, so what it holds is not mistaken for a leak (its
    // `Data` keys sit in enum payloads whose tagged pointers LeakSanitizer cannot follow).
    let verifier = SignedDataVerifier(trustedRoots: roots, bundleID: "com.example", allowSandbox: true)
    let text = String(decoding: rest, as: UTF8.self)
    for _ in 0..<2 {
        switch choice % 4 {
        case 0: _ = verifier.verifyTransaction(text, now: now)
        case 1: _ = verifier.verifyNotification(text, now: now)
        case 2: _ = verifier.verifyRenewalInfo(text, now: now)
        default: _ = try? X509Certificate.parsePEMOrDER(rest)
        }
    }
    return 0
}

runFuzzer(fuzzSignedData)
