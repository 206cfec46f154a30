import DepotTestSupport
import Foundation
import Testing

/// `depot edge-config nginx [--upstream …] [--cache-dir …]` as scale-out §6 writes it, with no `--edge-secret`:
/// the configuration is printed with a new secret of its own (the one printed with that secret given), and stderr
/// says to start the instances with it.
@Suite struct EdgeConfigSecretTests {
    static let arguments = ["edge-config", "nginx", "--upstream", "127.0.0.1:18080,127.0.0.1:18081", "--cache-dir", "/var/cache/depot-edge-test"]

    /// The 64 hex digits after `--edge-secret ` in `text`.
    static func secret(in text: String) -> String? {
        guard let range = text.range(of: "with --edge-secret ") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isHexDigit }
        return digits.count == 64 ? String(digits) : nil
    }

    @Test func withoutASecretTheConfigurationCarriesANewOne() async throws {
        let first = try await ProcessRunner.run(ProcessRunner.depotExecutable, Self.arguments)
        #expect(first.status == 0, "\(first.stderr)")
        let secret = try #require(Self.secret(in: first.stderr), "stderr names the secret to start the instances with: \(first.stderr)")
        #expect(first.stdout.contains("\"\(secret)\""), "the configuration sends that secret")
        #expect(!first.stdout.contains("--edge-secret \(secret)") && first.stdout.hasPrefix("#"), "stdout is the configuration alone")

        // The same configuration as printed for that secret given.
        let given = try await ProcessRunner.run(ProcessRunner.depotExecutable, Self.arguments + ["--edge-secret", secret])
        #expect(given.status == 0 && given.stderr.isEmpty, "\(given.stderr)")
        #expect(given.stdout == first.stdout)

        // Every run makes its own.
        let second = try await ProcessRunner.run(ProcessRunner.depotExecutable, Self.arguments)
        #expect(second.status == 0)
        #expect(Self.secret(in: second.stderr).map { $0 != secret } == true)
    }

    @Test func aGivenSecretThatIsTooShortIsStillRefused() async throws {
        let result = try await ProcessRunner.run(ProcessRunner.depotExecutable, Self.arguments + ["--edge-secret", "short"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--edge-secret") && result.stdout.isEmpty, "\(result.stderr)")
    }
}
