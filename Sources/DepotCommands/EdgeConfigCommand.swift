import ArgumentParsing
import DepotCrypto
import DepotServer
import Foundation

/// `depot edge-config nginx`: prints a complete nginx configuration that load-balances the instances and
/// caches pack bytes at the edge (scale-out §6), with TLS when given a certificate (operations §5).
struct EdgeConfigNginxCommand: Command {
    static let name = "nginx"
    static let synopsis: String? =
        "[--upstream HOST:PORT,...] [--cache-dir DIR] [--listen ADDRESS,...] [--tls-cert FILE --tls-key FILE] [--edge-secret SECRET]"
    static let summary = "Print an nginx configuration: load balancing over the instances and an edge cache for pack bytes."

    @Option("upstream", .commaSeparated, help: "the instances, HOST:PORT each", valueName: "HOST:PORT,...")
    var upstreams = ["127.0.0.1:8080"]
    @Option("cache-dir", .directory, help: "nginx's cache, temporary files and PID file (an absolute path)")
    var cacheDirectory = "/var/cache/depot-edge"
    @Option("listen", .commaSeparated, help: "what nginx listens on: PORT, HOST:PORT or [IPV6]:PORT", valueName: "ADDRESS,...",
            defaultText: "80, or 443 with --tls-cert")
    var listen: [String]?
    @Option("tls-cert", help: "certificate chain (PEM) for TLS with HTTP/1.1 and HTTP/2", valueName: "FILE")
    var tlsCertificate: String?
    @Option("tls-key", help: "the certificate's private key (PEM)", valueName: "FILE")
    var tlsKey: String?
    @Option("cache-max-size", help: "the edge cache's size limit", valueName: "SIZE")
    var cacheMaxSize = "10g"
    @OptionGroup(only: "edge-secret") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        // Without a secret (scale-out §6's synopsis names none), one is made here and printed into the
        // configuration; stderr says to start every instance with it.
        let secret = configuration.edgeSecret ?? Self.generatedSecret()
        let tls: (certificate: String, key: String)?
        switch (tlsCertificate, tlsKey) {
        case (nil, nil): tls = nil
        case (let certificate?, let key?): tls = (certificate, key)
        default: throw UsageError("--tls-cert and --tls-key go together")
        }
        let edge = NginxEdgeConfiguration(upstreams: upstreams, cacheDirectory: cacheDirectory, listen: listen ?? [tls == nil ? "80" : "443"],
                                          tls: tls, edgeSecret: secret, cacheMaxSize: cacheMaxSize)
        do {
            try edge.check()
        } catch {
            if error.option == "edge-secret" { throw ConfigurationError(option: error.option, error.message) }
            throw UsageError("--\(error.option): \(error.message)")
        }
        if configuration.edgeSecret == nil {
            FileHandle.standardError.write(Data(("depot: edge-config: no --edge-secret given, so this configuration carries a new one: "
                + "start every instance with --edge-secret \(secret) (or DEPOT_EDGE_SECRET), which nginx's cache fills "
                + "present to the origin route\n").utf8))
        }
        say(edge.render(), terminator: "")
        return 0
    }

    /// 32 random bytes from libcrypto as 64 hex digits: what `--edge-secret` accepts and nginx's configuration can hold.
    static func generatedSecret() -> String { Hex.encode(SecureRandom.bytes(32)) }
}
