import DepotCore
import Foundation
import Testing

/// `JSONSerialization` gives JSON numbers and booleans alike as `NSNumber`; the strict reads tell them apart.
@Suite struct JSONScalarTests {
    /// The values of `{"v": <json>}` as `JSONSerialization` gives them.
    static func parsed(_ json: String) throws -> Any {
        let object = try JSONSerialization.jsonObject(with: Data("{\"v\": \(json)}".utf8)) as? [String: Any]
        return try #require(object?["v"])
    }

    @Test(arguments: [("true", true as Bool?), ("false", false), ("1", nil), ("0", nil), ("\"true\"", nil), ("1.0", nil)])
    func boolean(json: String, expected: Bool?) throws {
        #expect(JSONScalar.boolean(try Self.parsed(json)) == expected, "\(json)")
    }

    @Test(arguments: [("4096", 4096 as Int64?), ("4096.0", 4096), ("4e3", 4000), ("-3", -3), ("9223372036854775807", Int64.max),
                      ("4096.5", nil), ("true", nil), ("false", nil), ("\"4096\"", nil), ("1e300", nil), ("18446744073709551615", nil)])
    func integer(json: String, expected: Int64?) throws {
        #expect(JSONScalar.integer(try Self.parsed(json)) == expected, "\(json)")
    }
}
