import AppStoreSimulator
import DepotServer
import DepotTestSupport

extension DepotConfiguration {
    /// A configuration whose App Store Server API is `store`'s: its root certificate and API key written into
    /// `files`, the key's ID and issuer, both API URLs, and the fixtures' bundle ID.
    static func simulatedServerAPI(_ store: SimulatedAppStore, files: TemporaryDirectory) throws -> DepotConfiguration {
        files.write("root.pem", store.serverAPI.pki.rootPEM)
        var configuration = DepotConfiguration()
        configuration.bundleID = PurchaseFixture.bundleID
        configuration.appleRootCertificateFiles = [files.path + "/root.pem"]
        configuration.appleAPIKeyFile = try store.serverAPI.key.writeKeyFile(into: files.path)
        configuration.appleAPIKeyID = store.serverAPI.key.keyID
        configuration.appleAPIIssuer = store.serverAPI.key.issuerID
        configuration.appleAPIURL = store.apiURL
        configuration.appleAPISandboxURL = store.apiSandboxURL
        return configuration
    }
}
