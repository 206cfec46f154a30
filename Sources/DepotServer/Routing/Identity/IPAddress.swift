import Foundation
import Glibc

/// An IPv4 or IPv6 address as its bytes (4 or 16). IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`) are read as
/// the IPv4 address they carry, so a block written either way matches a peer reported either way.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    let bytes: [UInt8]

    var isIPv4: Bool { bytes.count == 4 }

    /// A literal (`192.0.2.1`, `2001:db8::1`), or nil.
    package init?(_ text: some StringProtocol) {
        let literal = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return nil }
        let raw = withUnsafeBytes(of: v6) { Array($0) }
        bytes = raw[0..<10].allSatisfy { $0 == 0 } && raw[10] == 0xFF && raw[11] == 0xFF ? Array(raw[12...]) : raw
    }

    /// The host of a socket peer as the engine reports it (`192.0.2.1:5000`, `[2001:db8::1]:5000`), or nil.
    package init?(peer: String) {
        if peer.hasPrefix("["), let close = peer.firstIndex(of: "]") {
            self.init(peer[peer.index(after: peer.startIndex)..<close])
        } else if let colon = peer.lastIndex(of: ":"), !peer[..<colon].contains(":") {
            self.init(peer[..<colon])
        } else {
            self.init(peer)
        }
    }

    /// An element of `X-Forwarded-For` or a `for=` of `Forwarded` (RFC 7239 §6): an address, maybe quoted, maybe
    /// with a port (`"[2001:db8::1]:4711"`, `192.0.2.1:80`); nil for `unknown`, obfuscated names and garbage.
    package init?(forwarded text: some StringProtocol) {
        var value = text.trimmingCharacters(in: [" ", "\t"])
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
        if let direct = IPAddress(value) {
            self = direct
        } else {
            self.init(peer: value)
        }
    }

    package var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
