public import ArgumentParsing
import Foundation

/// A CIDR block (`10.0.0.0/8`, `2001:db8::/32`; an address alone is a block of one), as `--trusted-proxies`
/// takes them (scale-out.md §5).
public struct AddressBlock: Sendable, Hashable, CustomStringConvertible {
    let network: IPAddress
    let prefixLength: Int

    /// `ADDRESS[/BITS]`, or nil.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), given >= 0, given <= bits, parts[1].allSatisfy(\.isASCII) else { return nil }
            length = given
        }
        // The network's own bits only: `10.1.2.3/8` is `10.0.0.0/8`.
        var bytes = address.bytes
        for index in bytes.indices {
            let kept = max(0, min(8, length - index * 8))
            bytes[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
        }
        network = IPAddress(bytes: bytes)
        prefixLength = length
    }

    /// Whether `address` is inside the block.
    package func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for index in network.bytes.indices where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : UInt8(truncatingIfNeeded: 0xFF << (8 - remaining))
            if address.bytes[index] & mask != network.bytes[index] { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String { "\(network)/\(prefixLength)" }
}

extension IPAddress {
    /// An address from its bytes (4 or 16).
    init(bytes: [UInt8]) {
        self.bytes = bytes
    }
}

extension OptionParser where Value == [AddressBlock] {
    /// Comma-separated CIDR blocks (`10.0.0.0/8,::1`).
    public static var addressBlocks: OptionParser<[AddressBlock]> {
        OptionParser(valueName: "CIDR,...", parse: { (text: String) throws(InvalidOptionValue) -> [AddressBlock] in
            var blocks: [AddressBlock] = []
            for item in text.split(separator: ",") {
                let trimmed = item.trimmingCharacters(in: .whitespaces)
                guard let block = AddressBlock(trimmed) else {
                    throw InvalidOptionValue("\"\(trimmed)\" is not an address or a CIDR block (10.0.0.0/8, 2001:db8::/32)")
                }
                blocks.append(block)
            }
            return blocks
        }, format: { $0.map(\.description).joined(separator: ",") })
    }
}
