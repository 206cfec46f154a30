import DepotWire

/// The nginx configuration that `depot edge-config nginx` prints (scale-out §6, operations §5): a complete
/// `nginx.conf` that load-balances the Depot instances and serves pack bytes from its own cache.
///
/// - Every request goes to the instances over keep-alive connections, with `X-Forwarded-For`,
///   `X-Forwarded-Proto` and `X-Request-ID` (the client's when it is 1–128 visible characters, else nginx's).
///   A request that fails to reach an instance, or gets `502`/`503`/`504`, is passed to the next one if it is
///   idempotent (nginx never retries `POST`), so a dead instance costs nothing.
/// - Pack files: before each request nginx asks `GET /v1/edge/authorize` (`auth_request`, with the edge
///   secret, so Depot records what it allows as delivered), which checks the token and revocation in memory;
///   then it serves the bytes from its cache, filled from the origin route one 1 MiB slice at a time (so
///   ranges and resumes are cached too), keyed by the path alone (never the token). A refusal is fetched again from the file URL itself, so the client gets Depot's exact answer.
/// - With a certificate and key, the server block speaks TLS with HTTP/1.1 and HTTP/2 to clients.
public struct NginxEdgeConfiguration: Sendable {
    /// A `HOST:PORT` an instance listens on.
    public var upstreams: [String]
    /// Where nginx keeps its cache, temporary files and PID file: an absolute path to a directory that exists
    /// (nginx creates what goes inside, for its worker user).
    public var cacheDirectory: String
    /// What the server block listens on: `PORT`, `HOST:PORT` or `[IPV6]:PORT`.
    public var listen: [String]
    /// The certificate and key files for TLS; nil for plain HTTP.
    public var tls: (certificate: String, key: String)?
    /// `--edge-secret`, sent to the origin route and the authorize check.
    public var edgeSecret: String
    /// The cache's size limit (nginx's `max_size`, e.g. `10g`).
    public var cacheMaxSize: String

    /// The slice size of the cache: Depot's default chunk size.
    static let sliceSize = "1m"

    /// A configuration; `check()` says whether its values can go into nginx's syntax.
    public init(upstreams: [String], cacheDirectory: String, listen: [String], tls: (certificate: String, key: String)?,
                edgeSecret: String, cacheMaxSize: String) {
        self.upstreams = upstreams
        self.cacheDirectory = cacheDirectory
        self.listen = listen
        self.tls = tls
        self.edgeSecret = edgeSecret
        self.cacheMaxSize = cacheMaxSize
    }

    /// A value that cannot be written into the configuration: the option (without dashes) and why.
    public struct Problem: Error, Sendable, Equatable {
        public let option: String
        public let message: String
    }

    /// Refuses values that are not what their option takes, or that would change the meaning of the
    /// configuration they are written into (quotes, `$`, `;`, braces, spaces, control characters).
    public func check() throws(Problem) {
        guard !upstreams.isEmpty else { throw Problem(option: "upstream", message: "give at least one HOST:PORT") }
        for upstream in upstreams where !Self.isEndpoint(upstream, portRequired: true) {
            throw Problem(option: "upstream", message: "\"\(Self.shown(upstream))\" is not HOST:PORT")
        }
        guard !listen.isEmpty else { throw Problem(option: "listen", message: "give a PORT or HOST:PORT") }
        for address in listen where !Self.isEndpoint(address, portRequired: false) {
            throw Problem(option: "listen", message: "\"\(Self.shown(address))\" is not PORT, HOST:PORT or [IPV6]:PORT")
        }
        try Self.checkPath(cacheDirectory, option: "cache-dir")
        if let tls {
            try Self.checkPath(tls.certificate, option: "tls-cert")
            try Self.checkPath(tls.key, option: "tls-key")
        }
        guard edgeSecret.utf8.count >= 32 else { throw Problem(option: "edge-secret", message: "must be at least 32 characters") }
        guard edgeSecret.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
            && $0 != UInt8(ascii: "$") }) else {
            throw Problem(option: "edge-secret", message: "must be visible ASCII without quotes, backslashes or $ to be written into nginx's configuration")
        }
        let size = cacheMaxSize.lowercased()
        guard let last = size.last, !size.isEmpty, size.dropLast().allSatisfy(\.isNumber),
              last.isNumber || "kmg".contains(last), size.first?.isNumber == true else {
            throw Problem(option: "cache-max-size", message: "\"\(Self.shown(cacheMaxSize))\" is not a size such as 512m or 10g")
        }
    }

    /// The configuration text.
    public func render() -> String {
        let cache = cacheDirectory.hasSuffix("/") && cacheDirectory.count > 1 ? String(cacheDirectory.dropLast()) : cacheDirectory
        var lines: [String] = [
            "# nginx in front of \(upstreams.count) Depot instance\(upstreams.count == 1 ? "" : "s"), printed by `depot edge-config nginx`.",
            "# Needs nginx 1.22 or later with the auth_request, slice\(tls == nil ? "" : ", ssl and http_v2") modules (Debian's `nginx` package).",
            "# Create \(cache) first, then run it as its own nginx: nginx -c THIS_FILE (with -g 'daemon off;' under",
            "# a supervisor). Start every instance with --edge-secret set to the secret below and --trusted-proxies",
            "# naming this host.",
            "",
            "worker_processes auto;",
            "pid \(Self.quoted(cache + "/nginx.pid"));",
            "error_log stderr warn;",
            "",
            "events {",
            "    worker_connections 4096;",
            "}",
            "",
            "http {",
            "    access_log off;",
            "    server_tokens off;",
            "    sendfile on;",
            "    tcp_nopush on;",
            "    keepalive_timeout 65s;",
            "    keepalive_requests 10000;",
            "    # Depot enforces each route's body limit and answers 413 itself; bodies stream through unbuffered.",
            "    client_max_body_size 0;",
            "    proxy_request_buffering off;",
        ]
        for (directive, name) in [("client_body_temp_path", "client-body"), ("proxy_temp_path", "proxy"), ("fastcgi_temp_path", "fastcgi"),
                                  ("uwsgi_temp_path", "uwsgi"), ("scgi_temp_path", "scgi")] {
            lines.append("    \(directive) \(Self.quoted(cache + "/" + name));")
        }
        lines += [
            "",
            "    upstream depot_instances {",
        ]
        for upstream in upstreams {
            lines.append("        server \(upstream) max_fails=1 fail_timeout=2s;")
        }
        lines += [
            "        keepalive 64;",
            "        keepalive_requests 10000;",
            "        # Shorter than Depot's --idle-timeout (60 s): nginx closes an idle connection before Depot does.",
            "        keepalive_timeout 50s;",
            "    }",
            "",
            "    # Pack bytes, one entry per 1 MiB slice of a file, keyed by its path (never by a token): versions are immutable.",
            "    proxy_cache_path \(Self.quoted(cache + "/packs")) levels=1:2 keys_zone=depot_packs:32m max_size=\(cacheMaxSize) inactive=30d use_temp_path=off;",
            "",
            "    # The client's request ID when it is 1 to 128 visible characters, else a fresh one.",
            "    map $http_x_request_id $depot_request_id {",
            "        default $request_id;",
            "        \"~^[!-~]{1,128}$\" $http_x_request_id;",
            "    }",
            "    # A pack file URL (as the client sent it, without the query) on the origin route.",
            "    map $request_uri $depot_origin_uri {",
            "        default \(WirePath.edgeOriginPrefix);",
            "        \"~^/v1/packs/(?<depot_file>[^?]*)\" \(WirePath.edgeOriginPrefix)$depot_file;",
            "    }",
            "",
            "    proxy_http_version 1.1;",
            "    proxy_pass_header Server;",
            "    proxy_connect_timeout 2s;",
            "    proxy_read_timeout 60s;",
            "    # Idempotent requests go to the next instance when one is down or answers 502/504; POST never does. Not on 503:",
            "    # Depot's 503 (PostgreSQL away, with Retry-After) is the answer; nginx would count it as the instance failing",
            "    # and, every instance answering alike, refuse everything, product lists included, with its own 502.",
            "    proxy_next_upstream error timeout http_502 http_504;",
            "    proxy_next_upstream_timeout 15s;",
        ]
        lines += Self.forwardedHeaders(indent: "    ")
        lines += ["", "    server {"]
        lines += serverPreamble()
        lines += packFileLocations()
        lines += [
            "",
            "        # Uploads and publishes may take long.",
            "        location /admin/ {",
            "            proxy_read_timeout 3600s;",
            "            proxy_send_timeout 3600s;",
            "            proxy_pass http://depot_instances;",
            "        }",
            "",
            "        location / {",
            "            proxy_pass http://depot_instances;",
            "        }",
            "    }",
            "}",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Parts

    private func serverPreamble() -> [String] {
        var lines: [String] = []
        for address in listen {
            lines.append("        listen \(address)\(tls == nil ? "" : " ssl http2");")
        }
        lines.append("        server_name _;")
        if let tls {
            lines += [
                "        ssl_certificate \(Self.quoted(tls.certificate));",
                "        ssl_certificate_key \(Self.quoted(tls.key));",
                "        ssl_protocols TLSv1.2 TLSv1.3;",
                "        ssl_session_cache shared:depot_tls:10m;",
                "        ssl_session_timeout 1d;",
                "        ssl_session_tickets off;",
            ]
        }
        return lines
    }

    private func packFileLocations() -> [String] {
        var lines = [
            "",
            "        # Pack files: Depot says whether the token may open the file (every request, cached bytes too, so a",
            "        # revocation takes effect at once), then the bytes come from the cache. A refusal (401, 403; anything",
            "        # else the check answers becomes 500: 400, 404, 412, 416, 503) is fetched from the file URL itself,",
            "        # so the client gets Depot's exact answer.",
            "        location ~ ^/v1/packs/[^/]+/[^/]+/files/ {",
            "            auth_request /_depot/authorize;",
            "            auth_request_set $depot_accept_ranges $upstream_http_\(String(EdgeRoutes.acceptRangesField.lowercased().map { $0 == "-" ? "_" : $0 }));",
            "            error_page 401 403 500 = @depot_direct;",
            "            slice \(Self.sliceSize);",
            "            proxy_cache depot_packs;",
            "            proxy_cache_key $depot_origin_uri$slice_range;",
            "            proxy_cache_valid 200 206 30d;",
            "            proxy_cache_lock on;",
            "            proxy_cache_lock_timeout 60s;",
            "            proxy_cache_lock_age 60s;",
            "            # Depot marks pack files private (for caches between the edge and the client); the edge caches them.",
            "            proxy_ignore_headers Cache-Control Expires Set-Cookie;",
            "            proxy_hide_header X-Request-ID;",
            "            add_header X-Request-ID $depot_request_id always;",
            "            add_header X-Depot-Edge-Cache $upstream_cache_status always;",
            "            # nginx's 206 lacks the Accept-Ranges Depot's has; Depot's check says when the answer is one.",
            "            add_header Accept-Ranges $depot_accept_ranges;",
        ]
        lines += Self.forwardedHeaders(indent: "            ")
        lines += [
            "            proxy_set_header Range $slice_range;",
            "            proxy_set_header Authorization \"\";",
            "            proxy_set_header \(EdgeRoutes.secretField) \(Self.quoted(edgeSecret));",
            "            proxy_pass http://depot_instances$depot_origin_uri;",
            "        }",
            "",
            "        location = /_depot/authorize {",
            "            internal;",
            "            proxy_pass_request_body off;",
        ]
        lines += Self.forwardedHeaders(indent: "            ")
        lines += [
            "            proxy_set_header Content-Length \"\";",
            "            proxy_set_header \(EdgeRoutes.originalURIField) $request_uri;",
            "            proxy_set_header \(EdgeRoutes.originalMethodField) $request_method;",
            "            # The secret tells Depot the check comes from the edge, which then sends the bytes: only then are they recorded.",
            "            proxy_set_header \(EdgeRoutes.secretField) \(Self.quoted(edgeSecret));",
            "            proxy_pass http://depot_instances\(WirePath.edgeAuthorize.pattern);",
            "        }",
            "",
            "        location @depot_direct {",
            "            proxy_pass http://depot_instances$request_uri;",
            "        }",
        ]
        return lines
    }

    /// What every request to an instance carries (a location that sets any `proxy_set_header` inherits none).
    private static func forwardedHeaders(indent: String) -> [String] {
        [
            "proxy_set_header Connection \"\";",
            "proxy_set_header Host $host;",
            "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
            "proxy_set_header X-Forwarded-Proto $scheme;",
            "proxy_set_header X-Request-ID $depot_request_id;",
        ].map { indent + $0 }
    }

    // MARK: - Checks

    private static func quoted(_ text: String) -> String { "\"\(text)\"" }

    /// `text` with anything unprintable replaced, for an error message.
    private static func shown(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
    }

    private static func checkPath(_ path: String, option: String) throws(Problem) {
        guard path.hasPrefix("/") else { throw Problem(option: option, message: "must be an absolute path") }
        guard !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f || "\"\\$;{}".unicodeScalars.contains($0) }) else {
            throw Problem(option: option, message: "must not contain quotes, backslashes, $, ;, braces or control characters")
        }
    }

    /// `HOST:PORT`, `[IPV6]:PORT`, or (without `portRequired`) a bare `PORT`.
    static func isEndpoint(_ text: String, portRequired: Bool) -> Bool {
        func isPort(_ part: Substring) -> Bool {
            !part.isEmpty && part.count <= 5 && part.allSatisfy { $0.isASCII && $0.isNumber } && (1...65535).contains(Int(part) ?? 0)
        }
        if !portRequired && isPort(Substring(text)) { return true }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return false }
            let host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            return !host.isEmpty && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } && rest.hasPrefix(":") && isPort(rest.dropFirst())
        }
        guard let colon = text.lastIndex(of: ":") else { return false }
        let host = text[..<colon]
        return !host.isEmpty && host.count <= 253
            && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "*") }
            && isPort(text[text.index(after: colon)...])
    }
}
