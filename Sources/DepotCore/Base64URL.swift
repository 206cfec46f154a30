/// Base64url without padding (RFC 4648 §5; the form JWS uses, RFC 7515 §2), also used by
/// download tokens.
///
/// Decoding is strict so that each byte string has exactly one accepted text: only the URL-safe
/// alphabet, no padding, no whitespace, and the unused low bits of the last character must be
/// zero (RFC 4648 §3.5 allows decoders to require this).
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        let count = (input.count * 4 + 2) / 3
        if count == 0 { return "" }
        return String(unsafeUninitializedCapacity: count) { output in
            var out = 0
            var index = 0
            while index + 3 <= input.count {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output[out] = alphabet[Int(chunk >> 18 & 63)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 63)]
                output[out + 2] = alphabet[Int(chunk >> 6 & 63)]
                output[out + 3] = alphabet[Int(chunk & 63)]
                out += 4
                index += 3
            }
            let rest = input.count - index
            if rest > 0 {
                let chunk = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                output[out] = alphabet[Int(chunk >> 18 & 63)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 63)]
                if rest == 2 { output[out + 2] = alphabet[Int(chunk >> 6 & 63)] }
            }
            return count
        }
    }

    /// Decodes unpadded base64url; nil for anything else (see the type's rules).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        if let result = text.utf8.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return result }
        return Array(text.utf8).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    /// Decodes unpadded base64url given as ASCII bytes (e.g. a slice of a request); nil for
    /// anything else.
    public static func decode(bytes: some Collection<UInt8>) -> [UInt8]? {
        if let result = bytes.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return result }
        return Array(bytes).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    private static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let remainder = input.count % 4
        guard remainder != 1 else { return nil }
        let whole = input.count / 4
        let capacity = whole * 3 + (remainder == 0 ? 0 : remainder - 1)
        if capacity == 0 { return [] }
        var valid = true
        let output = decodingTable.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: capacity) { out, initialized in
                var inIndex = 0, outIndex = 0
                for _ in 0..<whole {
                    let a = table[Int(input[inIndex])], b = table[Int(input[inIndex + 1])]
                    let c = table[Int(input[inIndex + 2])], d = table[Int(input[inIndex + 3])]
                    if (a | b | c | d) & 0xC0 != 0 { valid = false; break }
                    let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[outIndex] = UInt8(truncatingIfNeeded: chunk >> 16)
                    out[outIndex + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    out[outIndex + 2] = UInt8(truncatingIfNeeded: chunk)
                    inIndex += 4
                    outIndex += 3
                }
                if valid && remainder >= 2 {
                    let a = table[Int(input[inIndex])], b = table[Int(input[inIndex + 1])]
                    let c = remainder == 3 ? table[Int(input[inIndex + 2])] : 0
                    let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    // RFC 4648 §3.5: the bits after the last whole byte must be zero.
                    if (a | b | c) & 0xC0 != 0 || chunk & (remainder == 2 ? 0xFFFF : 0xFF) != 0 {
                        valid = false
                    } else {
                        out[outIndex] = UInt8(truncatingIfNeeded: chunk >> 16)
                        if remainder == 3 { out[outIndex + 1] = UInt8(truncatingIfNeeded: chunk >> 8) }
                    }
                }
                initialized = valid ? capacity : 0
            }
        }
        return valid ? output : nil
    }
}
