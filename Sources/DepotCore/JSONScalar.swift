package import Foundation

/// Strict reads of the scalars of a `JSONSerialization` object, which gives every JSON number and boolean as an
/// `NSNumber`: on Linux `1 as? Bool` and `true as? NSNumber` both succeed, so `"stage": 1` would pass for `true`
/// and `"to": true` for the version 1. A JSON boolean is the `NSNumber` of type `c`. Used by every body Depot
/// reads with `JSONSerialization` (admin bodies, `/v1/receipts`, Apple's `verifyReceipt` answers).
package enum JSONScalar {
    /// Whether `number` came from a JSON `true`/`false` (as opposed to the numbers 0 and 1).
    package static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    /// `true` or `false`; nil for anything else (numbers included).
    package static func boolean(_ value: Any) -> Bool? {
        guard let number = value as? NSNumber, isBoolean(number) else { return nil }
        return number.boolValue
    }

    /// A JSON number with no fraction (`4096`, `4096.0`, `4e3`) that fits `Int64`; nil for anything else
    /// (booleans, `4096.5`, strings).
    package static func integer(_ value: Any) -> Int64? {
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        switch String(cString: number.objCType) {
        case "d", "f":
            let double = number.doubleValue
            guard double.isFinite, double.rounded() == double, abs(double) < 9.2e18 else { return nil }
            return Int64(double)
        case "Q":
            return number.uint64Value <= UInt64(Int64.max) ? Int64(number.uint64Value) : nil
        default:
            return number.int64Value
        }
    }
}
