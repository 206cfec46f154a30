import DepotCrypto
import Foundation
package import HTTP
import Synchronization

/// Gives every request its identity (operations.md §2, scale-out.md §5).
///
/// Only a peer inside `--trusted-proxies` is believed about the client (`Forwarded: for=`, else
/// `X-Forwarded-For`) and about the request's ID (`X-Request-ID`, when it is 1–128 visible ASCII characters).
/// Otherwise the peer is the client and the ID is generated: a random prefix per process and a counter per event
/// loop, 20 hex digits, unique within the process and, with 32 random bits, practically across a fleet.
package final class RequestIdentifier: Sendable {
    let trustedProxies: [AddressBlock]
    private let prefix: String
    private let counters: [Counter]

    final class Counter: Sendable {
        let value = Atomic<UInt64>(0)
    }

    /// Believes the peers inside `trustedProxies`; generates IDs for `loops` event loops.
    package init(trustedProxies: [AddressBlock], loops: Int) {
        self.trustedProxies = trustedProxies
        prefix = Hex.encode(SecureRandom.bytes(4))
        counters = (0..<max(1, loops)).map { _ in Counter() }
    }

    /// The identity of a request that arrived on `loop` from `peer` (`HOST:PORT`).
    func identify(_ head: RequestHead, peer: String, loop: Int) -> RequestIdentity {
        guard !trustedProxies.isEmpty, let peerAddress = IPAddress(peer: peer), isTrusted(peerAddress) else {
            return RequestIdentity(requestID: generate(loop: loop), clientAddress: peer)
        }
        let given = head.fields.values("x-request-id")
        let requestID = given.count == 1 && Self.isAcceptableRequestID(given[0]) ? given[0] : generate(loop: loop)
        return RequestIdentity(requestID: requestID, clientAddress: client(head.fields, peer: peer) ?? peer,
                               secureTransport: Self.saysHTTPS(head.fields))
    }

    /// Whether a (trusted) proxy's fields say the client's request came over TLS: `Forwarded`'s `proto=` of the
    /// nearest hop, else `X-Forwarded-Proto` (its last value).
    static func saysHTTPS(_ fields: HTTPFields) -> Bool {
        let forwarded = fields.values("forwarded").joined(separator: ",").split(separator: ",")
        if let nearest = forwarded.last {
            for pair in nearest.split(separator: ";") where pair.trimmingOWS().lowercased().hasPrefix("proto=") {
                return pair.trimmingOWS().dropFirst(6).trimmingCharacters(in: ["\""]).lowercased() == "https"
            }
        }
        let proto = fields.values("x-forwarded-proto").joined(separator: ",").split(separator: ",").last
        return proto.map { $0.trimmingOWS().lowercased() == "https" } ?? false
    }

    /// A fresh ID (requests the engine refused before a head was read).
    package func generate(loop: Int) -> String {
        let counter = counters[loop % counters.count]
        // Loop `l` of `n` counts l, l + n, l + 2n, ...: every loop's IDs are its own.
        let n = counter.value.wrappingAdd(1, ordering: .relaxed).oldValue &* UInt64(counters.count) &+ UInt64(loop % counters.count)
        let digits = String(n & 0xFFFF_FFFF_FFFF, radix: 16)
        return prefix + String(repeating: "0", count: 12 - digits.count) + digits
    }

    /// 1–128 visible ASCII characters (`!` to `~`).
    package static func isAcceptableRequestID(_ value: String) -> Bool {
        let bytes = value.utf8
        return !bytes.isEmpty && bytes.count <= 128 && bytes.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    /// Whether `peer` (`HOST:PORT`) is inside `--trusted-proxies` (always false without any).
    func trusts(peer: String) -> Bool {
        guard !trustedProxies.isEmpty, let address = IPAddress(peer: peer) else { return false }
        return isTrusted(address)
    }

    private func isTrusted(_ address: IPAddress) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// The client a trusted proxy reports: the hops of `Forwarded` (RFC 7239 `for=`) or else `X-Forwarded-For`,
    /// read from the nearest hop outwards past the trusted proxies; the first hop that is not one is the client.
    /// Nil when the fields say nothing usable.
    package func client(_ fields: HTTPFields, peer: String) -> String? {
        var hops: [IPAddress?] = []
        let forwarded = fields.values("forwarded")
        if !forwarded.isEmpty {
            for element in forwarded.joined(separator: ",").split(separator: ",") {
                let pair = element.split(separator: ";").first { $0.trimmingOWS().lowercased().hasPrefix("for=") }
                hops.append(pair.flatMap { IPAddress(forwarded: $0.trimmingOWS().dropFirst(4)) })
            }
        } else {
            for element in fields.values("x-forwarded-for").joined(separator: ",").split(separator: ",") {
                hops.append(IPAddress(forwarded: element))
            }
        }
        guard !hops.isEmpty else { return nil }
        for hop in hops.reversed() {
            // An unknown or obfuscated hop ends what can be known: the proxies beyond it are not ours to trust.
            guard let hop else { return nil }
            if !isTrusted(hop) { return hop.description }
        }
        return hops.first.flatMap { $0?.description }
    }
}
