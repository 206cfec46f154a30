import DepotCore
import DepotCrypto
import Foundation

/// Loads the copied vector files (see Fixtures/PROVENANCE.md).
enum Fixtures {
    static func url(_ path: String) -> URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(path)
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: url(path)))
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try bytes(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func certificate(_ path: String) throws -> X509Certificate {
        try X509Certificate(der: try bytes(path))
    }

    static func appleRoot() throws -> X509Certificate { try certificate("apple/AppleRootCA-G3.der") }
    static func testCA() throws -> X509Certificate { try certificate("apple-library/certs/testCA.der") }

    /// 2026-11-30T00:00:00Z, the day the vectors were collected: every real leaf but the
    /// 2025-2027 one has expired.
    static let collectionDay = Date(timeIntervalSince1970: 1_795_996_800)
}

/// Takes compact JWS apart and puts (possibly altered) parts back together, for tampering tests.
struct JWSParts {
    var header: [UInt8]
    var payload: [UInt8]
    var signature: [UInt8]

    init(_ jws: String) {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        header = Base64URL.decode(segments[0])!
        payload = Base64URL.decode(segments[1])!
        signature = Base64URL.decode(segments[2])!
    }

    init(header: [String: Any], payload: [String: Any], signature: [UInt8] = [UInt8](repeating: 7, count: 64)) throws {
        self.header = Array(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        self.payload = Array(try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
        self.signature = signature
    }

    var headerObject: [String: Any] {
        get { try! JSONSerialization.jsonObject(with: Data(header)) as! [String: Any] }
        set { header = Array(try! JSONSerialization.data(withJSONObject: newValue, options: [.sortedKeys])) }
    }

    var x5c: [String] {
        get { headerObject["x5c"] as! [String] }
        set { headerObject["x5c"] = newValue }
    }

    var compact: String {
        [header, payload, signature].map { Base64URL.encode($0) }.joined(separator: ".")
    }

    /// The DER certificates as `x5c` entries.
    static func x5c(_ certificates: [X509Certificate]) -> [String] {
        certificates.map { Data($0.derBytes).base64EncodedString() }
    }
}
