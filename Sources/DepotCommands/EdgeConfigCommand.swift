import ArgumentParsing
import DepotServer

/// `depot edge-config nginx`: prints a complete nginx configuration that load-balances the instances and
/// caches pack bytes at the edge (scale-out §6), with TLS when given a certificate (operations §5).
struct EdgeConfigNginxCommand: Command {
    static let name = "nginx"
    static let synopsis: String? =
        "--edge-secret SECRET [--upstream HOST:PORT,...] [--cache-dir DIR] [--listen ADDRESS,...] [--tls-cert FILE --tls-key FILE]"
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
        guard let secret = configuration.edgeSecret else {
            throw ConfigurationError(option: "edge-secret", "required: the secret every instance is started with (at least 32 characters)")
        }
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
        say(edge.render(), terminator: "")
        return 0
    }
}
