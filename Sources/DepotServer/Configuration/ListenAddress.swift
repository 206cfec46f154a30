public import ArgumentParsing

/// `HOST:PORT` of a listener (`--ops-listen 127.0.0.1:9090`, `[::1]:9090`).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT` or `[IPV6]:PORT`; nil for anything else.
    public init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portPart = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, portPart.allSatisfy(\.isASCII), let port = Int(portPart), (0...65535).contains(port) else { return nil }
        host = String(hostPart)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension OptionParser where Value == ListenAddress {
    /// `HOST:PORT`.
    public static var listenAddress: OptionParser<ListenAddress> {
        OptionParser(valueName: "HOST:PORT", refusal: "is not HOST:PORT (e.g. 127.0.0.1:9090)", parse: { ListenAddress($0) },
                     format: { $0.description })
    }
}
