import Foundation

/// Loads the verify-receipt vectors (copies of /work/shared/vectors/verify-receipt, see
/// Fixtures/verify-receipt/PROVENANCE.md) and builds hand-made response bodies.
enum ReceiptFixture {
    struct Missing: Error, CustomStringConvertible {
        let name: String
        var description: String { "fixture \(name) not found in the test bundle" }
    }

    /// The bytes of `Fixtures/verify-receipt/<name>.json`.
    static func data(_ name: String) throws -> Data {
        guard let base = Bundle.module.resourceURL else { throw Missing(name: name) }
        let url = base.appendingPathComponent("Fixtures/verify-receipt/\(name).json")
        guard let data = FileManager.default.contents(atPath: url.path) else { throw Missing(name: name) }
        return data
    }

    /// `name`'s JSON with `change` applied to its top-level object (for variations of a real vector).
    static func modified(_ name: String, _ change: (inout [String: Any]) -> Void) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: data(name)) as? [String: Any] ?? [:]
        change(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    /// UTF-8 bytes of a hand-written body.
    static func json(_ text: String) -> Data { Data(text.utf8) }

    /// A date from milliseconds since 1970.
    static func ms(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// The vectors' collection day (2026-11-30T00:00:00Z); every subscription in them has expired by then.
    static let collectionDay = Date(timeIntervalSince1970: 1_796_083_200)
}
