import Foundation

/// The one JSON configuration of Depot's wire bodies, shared by the server and the client.
///
/// Encoding writes members in `CodingKeys` order (never sorted), `": "` after a key and `", "` between
/// members and elements, minimal string escapes (``JSONText``), all on one line followed by `"\n"`. `nil`
/// is left out by `encodeIfPresent` and written as `null` by `encode(nil)`: a type decides which (an
/// entitlement's `expiresDate` is `null`, a manifest without a plan has no `plan`). Decoding is Foundation's.
public enum WireJSON {
    /// `value` as JSON text in Depot's layout, with a final newline.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        var out: [UInt8] = []
        try append(value, to: &out)
        out.append(0x0A)
        return out
    }

    /// Appends `value` as JSON text (without a newline) to `out`.
    public static func append(_ value: some Encodable, to out: inout [UInt8]) throws {
        try JSONTreeEncoder.tree(of: value, codingPath: []).write(to: &out)
    }

    /// Decodes `T` from JSON bytes.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
