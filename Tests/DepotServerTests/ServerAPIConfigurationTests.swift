import AppStoreSimulator
import ArgumentParsing
import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// The App Store Server API options (spec app-store-server-api §1): the key, its ID and the issuer come
/// together, the key must be EC P-256, `server-api` needs a key; each error stops `depot serve` with one
/// line naming the option, and never shows the key.
@Suite struct ServerAPIConfigurationTests {
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"
    // Throw-away keys (made with `openssl genpkey`), also used by the key-loading tests in DepotCryptoTests.
    static let p384Key = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBPHSwnLwa22JNd4UKo
        SZ4geb4ehMPvOPtpU0rECe87xX8SaYFkvVjITd28R/IpJdOhZANiAAR0QTFoJNnY
        aNKoz+hEqKf3aaBueANFikCjWy2kWab+nggXbuz03WStTQY3DqgGDh1hJ2E14WRF
        sqXV0Qjadt3NueZO2dh6Q1VIrFpCdQtNeMOgyCh+znoxL/KF6UzSFhY=
        -----END PRIVATE KEY-----

        """
    static let rsaKey = """
        -----BEGIN PRIVATE KEY-----
        MIIBVgIBADANBgkqhkiG9w0BAQEFAASCAUAwggE8AgEAAkEAyw/bShtwGcpDkWIr
        MaG+rhqQLC0YruKwd5LSDadNKrViCmau+hJ406gEndU0KMqQVwWu2HtoZx7eAyTn
        94XnOQIDAQABAkEArHPY/sTynVSDsbK3kD0XXXE9w+bAsbXfvI06S1IsXPmMmm6H
        BbN7+n0IhsfL8YpEcRdWoevSC8P/S1gLyQQdCQIhAP6ctyeMZlLKeM8/epyvyD5m
        df00rN2WB7iQW2egr2QPAiEAzCs1Tc35j1i5TLwnq/PqmuQY/aVN3cQxc14Eywoq
        GDcCIH5JSOcK0m3aE1XoTG6PGakptPgkOmGl2qqGn2+k2ZmtAiEAlTe3G4hArs2v
        kC+r5va8LjwrL6ZTBJPReHnskuB4530CIQDqrJ0JQD3puYw4Dxl3hNbazhwO8Nbd
        zViFG57JxGhnHg==
        -----END PRIVATE KEY-----

        """

    struct Row: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        var environment: [String: String] = [:]
        let option: String
        var says: String?
        var testDescription: String { (environment.map { "\($0.key)=…" } + arguments).joined(separator: " ") + " → " + option }
    }

    static let rows: [Row] = [
        Row(arguments: ["--apple-api-key", "good.p8"], option: "--apple-api-key-id"),
        Row(arguments: ["--apple-api-key-id", "ABCDEFGHIJ", "--apple-api-issuer", issuer], option: "--apple-api-key"),
        Row(arguments: ["--apple-api-key", "good.p8", "--apple-api-key-id", "ABCDEFGHIJ"], option: "--apple-api-issuer"),
        Row(arguments: ["--apple-api-key", "good.p8"], environment: ["DEPOT_APPLE_API_KEY_ID": "ABCDEFGHIJ"], option: "--apple-api-issuer"),
        Row(arguments: ["--apple-api-key", "missing.p8", "--apple-api-key-id", "ABCDEFGHIJ", "--apple-api-issuer", issuer],
            option: "--apple-api-key", says: "cannot read"),
        Row(arguments: ["--apple-api-key", "p384.p8", "--apple-api-key-id", "ABCDEFGHIJ", "--apple-api-issuer", issuer],
            option: "--apple-api-key", says: "not EC P-256"),
        Row(arguments: ["--apple-api-key", "rsa.p8", "--apple-api-key-id", "ABCDEFGHIJ", "--apple-api-issuer", issuer],
            option: "--apple-api-key", says: "not EC P-256"),
        Row(arguments: ["--apple-api-key", "catalog/products.json", "--apple-api-key-id", "ABCDEFGHIJ", "--apple-api-issuer", issuer],
            option: "--apple-api-key", says: "not a PEM file"),
        Row(arguments: ["--apple-api-key", "good.p8", "--apple-api-key-id", "ABCDEFGHIJ", "--apple-api-issuer", "not-a-uuid"],
            option: "--apple-api-issuer"),
        Row(arguments: ["--receipt-validation", "server-api"], option: "--receipt-validation", says: "needs an In-App Purchase key"),
        Row(arguments: [], environment: ["DEPOT_RECEIPT_VALIDATION": "server-api"], option: "--receipt-validation"),
        Row(arguments: ["--receipt-validation", "sometimes"], option: "--receipt-validation"),
        Row(arguments: ["--apple-app-id", "twelve"], option: "--apple-app-id"),
        Row(arguments: ["--notification-sync", "hourly"], option: "--notification-sync"),
        Row(arguments: ["--apple-api-url", "ftp://api.example.com"], option: "--apple-api-url"),
    ]

    /// A sample tree with a good P-256 key, a P-384 key and an RSA key beside the catalog.
    static func tree() throws -> (TemporaryDirectory, SimulatedAPIKey) {
        let tree = try CommandLineServeTests.sampleTree()
        let key = try SimulatedAPIKey.generate(issuerID: issuer)
        tree.write("good.p8", key.pkcs8PEM)
        tree.write("p384.p8", p384Key)
        tree.write("rsa.p8", rsaKey)
        return (tree, key)
    }

    /// Every row in-process: the options parsed as `depot serve` parses them, then `DepotApp.start`, which
    /// must throw the `ConfigurationError` naming the option (its description is the one line start-up prints).
    @Test func aBadKeyConfigurationStopsStartUp() async throws {
        let (tree, key) = try Self.tree()
        for row in Self.rows {
            let arguments = row.arguments.map { $0.hasSuffix(".p8") || $0 == "catalog/products.json" ? tree.path + "/" + $0 : $0 }
            var line: String
            do {
                var configuration = try DepotConfiguration.parse(arguments, environment: row.environment)
                configuration.port = 0
                configuration.paths = DepotPaths(catalogDirectory: tree.path + "/catalog", contentDirectory: tree.path + "/content",
                                                 dataDirectory: tree.path + "/var")
                let app = try await DepotApp.start(configuration, logger: Logger(output: LogOutput(capturing: true)))
                await app.stop()
                Issue.record("\(row) started")
                continue
            } catch let error as ConfigurationError {
                line = error.description
            } catch {
                line = "\(error)"
            }
            #expect(line.hasPrefix(row.option + ":"), "\(row): \(line)")
            #expect(!line.contains("\n"), "\(row): \(line)")
            if let says = row.says { #expect(line.contains(says), "\(row): \(line)") }
            for secret in [key.pkcs8PEM, Self.p384Key, Self.rsaKey] {
                for part in secret.split(separator: "\n") where !part.hasPrefix("-----") {
                    #expect(!line.contains(part), "\(row): the error shows key material")
                }
            }
        }
    }

    /// The same through the `depot` binary: one line on stderr naming the option, exit status 1.
    @Test(arguments: [rows[0], rows[5], rows[9]])
    func depotServeStopsWithOneLine(_ row: Row) async throws {
        let (tree, _) = try Self.tree()
        let arguments = ["serve", "--port", "0"] + row.arguments + CommandLineServeTests.quiet
        let result = try await CommandLineServeTests.runBounded(arguments, environment: row.environment, in: tree.path)
        #expect(result.status == 1, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains(row.option + ":") == true, "\(result.stderr)")
    }

    /// A complete key configuration starts (the API itself is asked only when a receipt comes).
    @Test func aCompleteKeyConfigurationStarts() async throws {
        let (tree, key) = try Self.tree()
        let arguments = ["--apple-api-key", "good.p8", "--apple-api-key-id", key.keyID, "--apple-api-issuer", Self.issuer,
                         "--apple-app-id", "1234567890", "--receipt-validation", "server-api", "--notification-sync", "0",
                         "--port", "0"] + CommandLineServeTests.quiet
        let result = try await CommandLineServeTests.serveAndStop(arguments, in: tree.path)
        #expect(result.line?.hasPrefix("listening on http://") == true, "\(result)")
        #expect(result.health == 200)
        #expect(result.status == 0)
    }
}
