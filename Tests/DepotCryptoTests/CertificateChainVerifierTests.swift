import DepotCrypto
import Foundation
import Testing

struct CertificateChainVerifierTests {
    static let midYear = TestChain.start.addingTimeInterval(180 * TestChain.day)

    @Test func validChainBuildsLeafToRoot() throws {
        let chain = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [chain.root])
        let verified = try verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: Self.midYear).get()
        #expect(verified.certificates == [chain.leaf, chain.intermediate, chain.root])
        #expect(verified.validFrom == TestChain.start)
        #expect(verified.validUntil == chain.leaf.notAfter)
        #expect(verified.isValid(at: Self.midYear))
        #expect(verified.isValid(at: chain.leaf.notAfter.addingTimeInterval(-1)))
        #expect(!verified.isValid(at: chain.leaf.notAfter))
        #expect(!verified.isValid(at: TestChain.start.addingTimeInterval(-1)))
    }

    @Test func validityStartsAtNotBeforeAndEndsAtNotAfter() throws {
        let chain = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [chain.root])
        let cases: [(Date, Bool)] = [
            (chain.leaf.notBefore, true), (chain.leaf.notBefore.addingTimeInterval(-1), false),
            (chain.leaf.notAfter.addingTimeInterval(-1), true), (chain.leaf.notAfter.addingTimeInterval(-0.001), true),
            (chain.leaf.notAfter, false),  // libcrypto: X509_cmp_time compares <=, so notAfter itself is expired
        ]
        for (time, valid) in cases {
            let result = verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: time)
            #expect((try? result.get()) != nil ? valid : !valid, "at \(time)")
        }
    }

    @Test func expiredLeafFailsWithOpenSSLReason() throws {
        let chain = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [chain.root])
        let late = chain.leaf.notAfter.addingTimeInterval(TestChain.day)
        let error = try #require(failure(verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: late)))
        #expect(error.reason == "certificate has expired")
        #expect(error.depth == 0)
    }

    @Test func notYetValidLeafFails() throws {
        let chain = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [chain.root])
        let early = TestChain.start.addingTimeInterval(-60)
        let error = try #require(failure(verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: early)))
        #expect(error.reason == "certificate is not yet valid")
    }

    @Test func anotherRootIsNotTrusted() throws {
        let chain = try TestChain()
        let other = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [other.root])
        let error = try #require(failure(verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: Self.midYear)))
        #expect(error.reason == "unable to get local issuer certificate")
    }

    @Test func rootPassedAsUntrustedIntermediateGivesNoTrust() throws {
        let chain = try TestChain()
        let other = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [other.root])
        let result = verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate, chain.root], at: Self.midYear)
        #expect(failure(result) != nil)
    }

    @Test func partialChainToATrustedIntermediateIsRefused() throws {
        let chain = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [chain.intermediate])
        #expect(failure(verifier.verify(leaf: chain.leaf, intermediates: [], at: Self.midYear)) != nil)
    }

    @Test func missingIntermediateFails() throws {
        let chain = try TestChain()
        let verifier = CertificateChainVerifier(trustedRoots: [chain.root])
        #expect(failure(verifier.verify(leaf: chain.leaf, intermediates: [], at: Self.midYear)) != nil)
    }

    @Test func intermediateThatIsNotACAFails() throws {
        let chain = try TestChain(intermediateIsCA: false)
        let verifier = CertificateChainVerifier(trustedRoots: [chain.root])
        let error = try #require(failure(verifier.verify(leaf: chain.leaf, intermediates: [chain.intermediate], at: Self.midYear)))
        #expect(error.reason == "invalid CA certificate")
        #expect(error.depth == 1)
    }

    private func failure(_ result: Result<VerifiedChain, ChainVerificationError>) -> ChainVerificationError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}
