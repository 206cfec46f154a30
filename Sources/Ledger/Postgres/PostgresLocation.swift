import Foundation

/// A PostgreSQL ledger's address, parsed from `postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME[?PARAMS]`
/// (or `postgresql://`), the URI form libpq documents.
///
/// - `HOST` may be a name, an IPv4 address, a bracketed IPv6 address, or empty when `host=` in `PARAMS`
///   names a Unix-socket directory; several `HOST[:PORT]` separated by commas are tried in turn (libpq's
///   multi-host form). User, password, database and parameters are percent-decoded.
/// - `PARAMS` are libpq connection parameters (`sslmode=require`, `host=/run/postgresql`, ...): names libpq
///   does not know are refused here, the others pass through, and they win over the URI's parts, as in libpq.
/// - The password never appears in `description` or in any error message (see `redact(_:)`).
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// One `HOST[:PORT]` of the URI.
    public struct Endpoint: Sendable, Equatable {
        /// A host name, address, or (percent-decoded) socket directory; empty: take `host=` from the parameters.
        public var host: String
        /// The port, when the URI names one.
        public var port: Int?

        /// An endpoint of a host and an optional port.
        package init(host: String, port: Int?) {
            self.host = host
            self.port = port
        }
    }

    /// The role to log in as.
    public let user: String
    /// The password, if the URI carries one (never printed).
    package let password: String?
    /// The hosts to try, in order.
    public let endpoints: [Endpoint]
    /// The database name.
    public let database: String
    /// libpq parameters from the query string, by name.
    public let parameters: [String: String]

    /// Parses a `postgres://` or `postgresql://` URI; a message for anything malformed (never echoing the text,
    /// which may hold the password).
    public init(parsing text: String) throws(LedgerError) {
        func refuse(_ problem: String) -> LedgerError { .invalidLocation(message: "not a valid PostgreSQL URI: \(problem)") }
        let lowered = text.lowercased()
        guard let scheme = ["postgresql://", "postgres://"].first(where: { lowered.hasPrefix($0) }) else {
            throw refuse("it must start with postgres:// or postgresql://")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        guard !rest.contains("#") else { throw refuse("it contains '#' (percent-encode it as %23)") }
        guard !rest.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } ?? false }) else {
            throw refuse("it contains spaces or control characters (percent-encode them)")
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw refuse("the database name is missing (…/DBNAME)") }
        let authority = rest[..<slash]
        let path = rest[rest.index(after: slash)...]

        var user = ""
        var password: String?
        var hostList = authority
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostList = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decode(userInfo[..<colon], "the user name", refuse)
                password = try Self.decode(userInfo[userInfo.index(after: colon)...], "the password", refuse)
            } else {
                user = try Self.decode(userInfo, "the user name", refuse)
            }
        }
        var endpoints: [Endpoint] = []
        for entry in hostList.split(separator: ",", omittingEmptySubsequences: false) {
            endpoints.append(try Self.endpoint(entry, refuse))
        }
        let database = try Self.decode(path, "the database name", refuse)

        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            guard let equals = pair.firstIndex(of: "=") else { throw refuse("a parameter has no '=' (NAME=VALUE)") }
            let name = try Self.decode(pair[..<equals], "a parameter name", refuse)
            let value = try Self.decode(pair[pair.index(after: equals)...], "the value of \(name)", refuse)
            guard PostgresConnection.knownKeywords.contains(name) else {
                throw refuse("unknown connection parameter '\(name)'")
            }
            parameters[name] = value
        }
        let resolvedUser = parameters["user"] ?? user
        guard !resolvedUser.isEmpty else { throw refuse("the user name is missing (USER@HOST)") }
        guard !(parameters["dbname"] ?? database).isEmpty else { throw refuse("the database name is missing (…/DBNAME)") }
        if parameters["host"] == nil && parameters["hostaddr"] == nil {
            guard endpoints.allSatisfy({ !$0.host.isEmpty }) else {
                throw refuse("the host is missing (give HOST, or host=DIRECTORY for a Unix socket)")
            }
        } else if endpoints.count > 1 {
            throw refuse("host= in the parameters cannot be combined with several hosts in the URI")
        }
        if let port = parameters["port"] {
            guard port.split(separator: ",", omittingEmptySubsequences: false).allSatisfy({ $0.isEmpty || Self.port($0) != nil }) else {
                throw refuse("port= must be a number between 1 and 65535")
            }
        }
        self.user = user
        self.password = password
        self.endpoints = endpoints
        self.database = database
        self.parameters = parameters
    }

    /// `postgres://USER@HOST:PORT/DBNAME?PARAMS` without the password (for logs and messages).
    public var description: String {
        let hosts = endpoints.map { endpoint in
            let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
            return host + (endpoint.port.map { ":\($0)" } ?? "")
        }.joined(separator: ",")
        let shown = parameters.filter { $0.key != "password" }.sorted { $0.key < $1.key }
        let query = shown.isEmpty ? "" : "?" + shown.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        return "postgres://\(user)@\(hosts)/\(database)\(query)"
    }

    /// libpq's keyword/value parameters for a connection: the URI's parts, its parameters (which win), and
    /// defaults a server needs (a connect timeout, TCP keepalives and a user timeout so a vanished server is
    /// noticed, and `application` as the fallback application name).
    package func connectionParameters(application: String) -> [(key: String, value: String)] {
        var values: [String: String] = [:]
        if endpoints.contains(where: { !$0.host.isEmpty }) {
            values["host"] = endpoints.map(\.host).joined(separator: ",")
        }
        if endpoints.contains(where: { $0.port != nil }) {
            values["port"] = endpoints.map { $0.port.map(String.init) ?? "" }.joined(separator: ",")
        }
        if !user.isEmpty { values["user"] = user }
        if let password { values["password"] = password }
        if !database.isEmpty { values["dbname"] = database }
        for (name, value) in parameters { values[name] = value }
        let defaults = [
            "connect_timeout": "5", "keepalives": "1", "keepalives_idle": "5", "keepalives_interval": "2",
            "keepalives_count": "3", "tcp_user_timeout": "15000", "fallback_application_name": application,
        ]
        for (name, value) in defaults where values[name] == nil { values[name] = value }
        return values.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    }

    /// `message` with every password this location carries replaced by `***` (raw and percent-encoded).
    package func redact(_ message: String) -> String {
        var result = message
        for secret in [password, parameters["password"]].compactMap({ $0 }) where secret.count >= 3 {
            result = result.replacingOccurrences(of: secret, with: "***")
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
                result = result.replacingOccurrences(of: encoded, with: "***")
            }
        }
        return result
    }

    // MARK: - Private

    private static func endpoint(
        _ entry: Substring, _ refuse: (String) -> LedgerError
    ) throws(LedgerError) -> Endpoint {
        var hostPart = entry
        var portPart: Substring?
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { throw refuse("an IPv6 address lacks its closing ']'") }
            hostPart = entry[entry.index(after: entry.startIndex)..<close]
            let after = entry[entry.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("unexpected text after an IPv6 address") }
                portPart = after.dropFirst()
            }
        } else if let colon = entry.lastIndex(of: ":") {
            hostPart = entry[..<colon]
            portPart = entry[entry.index(after: colon)...]
        }
        let host = try decode(hostPart, "a host", refuse)
        guard let portPart else { return Endpoint(host: host, port: nil) }
        guard let port = port(portPart) else { throw refuse("the port must be a number between 1 and 65535") }
        return Endpoint(host: host, port: port)
    }

    private static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }),
              let value = Int(text), (1...65535).contains(value) else { return nil }
        return value
    }

    private static func decode(
        _ text: Substring, _ what: String, _ refuse: (String) -> LedgerError
    ) throws(LedgerError) -> String {
        guard text.contains("%") else { return String(text) }
        guard let decoded = String(text).removingPercentEncoding, !decoded.contains("\0") else {
            throw refuse("\(what) has a bad percent-encoding")
        }
        return decoded
    }
}
