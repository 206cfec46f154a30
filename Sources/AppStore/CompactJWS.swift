import DepotCore
import Foundation

/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded but not yet trusted.
///
/// The header stays undecoded until asked for: a header seen before (the App Store signs every
/// payload with the same `{"alg":"ES256","x5c":[...]}`) is recognised by its exact text.
struct CompactJWS {
    /// The JOSE header fields Apple's verifier reads.
    struct Header: Decodable {
        var alg: String?
        var x5c: [String]?
    }

    /// The header segment as sent (base64url text).
    let headerSegment: Data
    /// The decoded payload bytes.
    let payload: Data
    /// RFC 7515 §5.2: the signature covers the ASCII of `BASE64URL(header) '.' BASE64URL(payload)`.
    let signingInput: [UInt8]
    /// The decoded signature (64 bytes `R‖S` for ES256).
    let signature: [UInt8]

    /// Splits `text` and decodes payload and signature; any failure is the `format` check.
    init(_ text: String) throws(VerificationFailure) {
        let bytes = Array(text.utf8)
        guard let firstDot = CompactJWS.dot(in: bytes, from: 0),
              let secondDot = CompactJWS.dot(in: bytes, from: firstDot + 1) else {
            throw .invalid(.format, detail: "a compact JWS has 3 segments separated by dots")
        }
        guard CompactJWS.dot(in: bytes, from: secondDot + 1) == nil else {
            throw .invalid(.format, detail: "a compact JWS has 3 segments, this has more")
        }
        guard let payloadBytes = Base64URL.decode(bytes: bytes[(firstDot + 1)..<secondDot]) else {
            throw .invalid(.format, detail: "payload is not base64url")
        }
        guard let signatureBytes = Base64URL.decode(bytes: bytes[(secondDot + 1)...]) else {
            throw .invalid(.format, detail: "signature is not base64url")
        }
        headerSegment = Data(bytes[..<firstDot])
        payload = Data(payloadBytes)
        signingInput = Array(bytes[..<secondDot])
        signature = signatureBytes
    }

    /// Decodes the header; failures are the `format` check.
    func decodeHeader() throws(VerificationFailure) -> Header {
        guard let json = Base64URL.decode(bytes: headerSegment) else {
            throw .invalid(.format, detail: "header is not base64url")
        }
        do {
            return try JSONDecoder().decode(Header.self, from: Data(json))
        } catch {
            throw .invalid(.format, detail: "header is not a JSON object with string alg and string-array x5c")
        }
    }

    /// Index of the next "." at or after `start` (memchr: a JWS header is several kilobytes).
    private static func dot(in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress,
                  let found = memchr(base + start, Int32(UInt8(ascii: ".")), buffer.count - start) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }
}
