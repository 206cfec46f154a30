import Foundation

/// A JSON object from `JSONSerialization`, read field by field with the leniency Apple's `verifyReceipt`
/// needs: numbers arrive as strings or as numbers, lists as arrays or (iOS 6 style) single objects, and
/// `null` counts as absent. Every failure names the field's JSON path.
struct ReceiptJSONObject {
    let fields: [String: Any]
    /// This object's path (`""` at the top level, `receipt`, `in_app[2]`, ...).
    let path: String

    /// Reads the top-level object of `data`.
    init(parsing data: Data) throws(ReceiptParseError) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw .notJSON
        }
        guard let fields = object as? [String: Any] else { throw .notAnObject }
        self.init(fields: fields, path: "")
    }

    init(fields: [String: Any], path: String) {
        self.fields = fields
        self.path = path
    }

    /// The path of `key` inside this object.
    func path(of key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Whether `key` holds a non-null value.
    func has(_ key: String) -> Bool { value(key) != nil }

    /// A string field (strings only).
    func string(_ key: String) throws(ReceiptParseError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value as? String else { throw .invalidField(path(of: key), expected: "a string") }
        return string
    }

    /// An identifier: a string as is, or an integral JSON number as its decimal text.
    func identifier(_ key: String) throws(ReceiptParseError) -> String? {
        guard let value = value(key) else { return nil }
        if let string = value as? String { return string }
        guard let number = Self.integer(value) else {
            throw .invalidField(path(of: key), expected: "a string or an integer")
        }
        return String(number)
    }

    /// An integer field, as a JSON number or a string of decimal digits.
    func integer(_ key: String) throws(ReceiptParseError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard let number = Self.integer(value) else { throw .invalidField(path(of: key), expected: "an integer") }
        return number
    }

    /// A boolean given as `true`/`false`, `0`/`1`, or those as strings (also `"yes"`/`"no"`).
    func bool(_ key: String) throws(ReceiptParseError) -> Bool? {
        guard let value = value(key) else { return nil }
        if let number = value as? NSNumber, JSONScalar.isBoolean(number) { return number.boolValue }
        let text = (value as? String)?.lowercased() ?? Self.integer(value).map(String.init)
        switch text {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw .invalidField(path(of: key), expected: "a boolean")
        }
    }

    /// The first present field of `keys` as a date: milliseconds since 1970 (number or numeric string,
    /// fractions allowed) or Apple's `yyyy-MM-dd HH:mm:ss Etc/GMT` text.
    func date(_ keys: String...) throws(ReceiptParseError) -> Date? {
        guard let key = keys.first(where: has), let value = value(key) else { return nil }
        if let milliseconds = Self.double(value) {
            // Years 0 to 9999: anything else is not a date an App Store payload can carry (and would trap
            // wherever it is turned back into integer milliseconds).
            guard abs(milliseconds) <= Self.latestMilliseconds else {
                throw .invalidField(path(of: key), expected: "a date in milliseconds")
            }
            return Date(timeIntervalSince1970: milliseconds / 1000)
        }
        if let text = value as? String, let date = ReceiptDateText.date(from: text) { return date }
        throw .invalidField(path(of: key), expected: "a date in milliseconds")
    }

    /// A nested object.
    func object(_ key: String) throws(ReceiptParseError) -> ReceiptJSONObject? {
        guard let value = value(key) else { return nil }
        guard let fields = value as? [String: Any] else { throw .invalidField(path(of: key), expected: "an object") }
        return ReceiptJSONObject(fields: fields, path: path(of: key))
    }

    /// A list of objects: a JSON array, or a single object (iOS 6 style) read as a list of one.
    func objects(_ key: String) throws(ReceiptParseError) -> [ReceiptJSONObject]? {
        guard let value = value(key) else { return nil }
        if let fields = value as? [String: Any] { return [ReceiptJSONObject(fields: fields, path: path(of: key))] }
        guard let array = value as? [Any] else {
            throw .invalidField(path(of: key), expected: "an array of objects")
        }
        var objects: [ReceiptJSONObject] = []
        for (index, element) in array.enumerated() {
            guard let fields = element as? [String: Any] else {
                throw .invalidField("\(path(of: key))[\(index)]", expected: "an object")
            }
            objects.append(ReceiptJSONObject(fields: fields, path: "\(path(of: key))[\(index)]"))
        }
        return objects
    }

    // MARK: - Values

    private func value(_ key: String) -> Any? {
        guard let value = fields[key], !(value is NSNull) else { return nil }
        return value
    }

    /// An integral value from a JSON number or a decimal string; `nil` for anything else or out of range.
    static func integer(_ value: Any) -> Int64? {
        if let string = value as? String { return Int64(string) }
        return JSONScalar.integer(value)
    }

    /// 9999-12-31T23:59:59.999Z in milliseconds since 1970.
    static let latestMilliseconds = 253_402_300_799_999.0

    /// A finite number from a JSON number or a numeric string.
    static func double(_ value: Any) -> Double? {
        if let string = value as? String {
            guard !string.isEmpty, string.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }),
                  let double = Double(string), double.isFinite else { return nil }
            return double
        }
        guard let number = value as? NSNumber, !JSONScalar.isBoolean(number) else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }
}
