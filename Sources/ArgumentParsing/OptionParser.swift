public import Foundation

/// How an option's text becomes a typed value, and how a value is shown again (`--help`, the README).
///
/// The common parsers are static members, so a declaration names one in a word:
/// `.integer(in: 0...65535)`, `.seconds`, `.httpURL`, `.directory`, `.text(minimumLength: 32)`.
/// Types that conform to ``OptionValue`` (strings, integers, booleans, ``EnumeratedOption``s) bring
/// their own and need none.
public struct OptionParser<Value: Sendable>: Sendable {
    /// What `--help` shows after the flag when the declaration gives no value name (`N`, `on|off`).
    public let valueName: String
    /// The accepted texts of an enumeration, in order; nil for open-ended values.
    public let allowedValues: [String]?
    /// `true` for booleans: the flag may be given alone (`--allow-sandbox` means true).
    public let isSwitch: Bool
    private let parseText: @Sendable (String) throws(InvalidOptionValue) -> Value
    private let formatValue: @Sendable (Value) -> String

    /// A parser from its two functions: `parse` refuses text with an ``InvalidOptionValue``; `format` shows a value.
    public init(valueName: String, allowedValues: [String]? = nil, isSwitch: Bool = false,
                parse: @escaping @Sendable (String) throws(InvalidOptionValue) -> Value,
                format: @escaping @Sendable (Value) -> String) {
        self.valueName = valueName
        self.allowedValues = allowedValues
        self.isSwitch = isSwitch
        self.parseText = parse
        self.formatValue = format
    }

    /// A parser from a function that answers nil for text it refuses; `refusal` completes the sentence
    /// `"TEXT" …` (e.g. `is not a version number`).
    public init(valueName: String, refusal: String, parse: @escaping @Sendable (String) -> Value?,
                format: @escaping @Sendable (Value) -> String) {
        self.init(valueName: valueName, parse: { (text: String) throws(InvalidOptionValue) -> Value in
            guard let value = parse(text) else { throw InvalidOptionValue("\"\(text)\" \(refusal)") }
            return value
        }, format: format)
    }

    /// The value of `text`, or why it is not one.
    public func parse(_ text: String) throws(InvalidOptionValue) -> Value {
        try parseText(text)
    }

    /// The text that stands for `value` (the inverse of ``parse(_:)`` for every value it returns).
    public func format(_ value: Value) -> String {
        formatValue(value)
    }

    /// The same parser with another value name.
    public func named(_ valueName: String) -> OptionParser<Value> {
        OptionParser(valueName: valueName, allowedValues: allowedValues, isSwitch: isSwitch, parse: parseText, format: formatValue)
    }

    /// This parser, then a check of the value: `check` returns nil to accept it, or the reason it refuses.
    public func checked(_ check: @escaping @Sendable (Value) -> String?) -> OptionParser<Value> {
        let parseText = self.parseText
        return OptionParser(valueName: valueName, allowedValues: allowedValues, isSwitch: isSwitch,
                            parse: { (text: String) throws(InvalidOptionValue) -> Value in
                                let value = try parseText(text)
                                if let refusal = check(value) { throw InvalidOptionValue(refusal) }
                                return value
                            }, format: formatValue)
    }

    /// Optional values: empty text means none (an empty `DEPOT_ADMIN_TOKEN=` turns the option off).
    public var optional: OptionParser<Value?> {
        let parseText = self.parseText
        let formatValue = self.formatValue
        return OptionParser<Value?>(valueName: valueName, allowedValues: allowedValues, isSwitch: isSwitch,
                                    parse: { (text: String) throws(InvalidOptionValue) -> Value? in
                                        text.isEmpty ? nil : try parseText(text)
                                    }, format: { $0.map(formatValue) ?? "" })
    }
}

extension OptionParser where Value == String {
    /// Any text.
    public static var text: OptionParser<String> {
        OptionParser(valueName: "TEXT", parse: { $0 }, format: { $0 })
    }

    /// Text of at least `minimumLength` bytes (secrets).
    public static func text(minimumLength: Int) -> OptionParser<String> {
        text.checked { $0.utf8.count < minimumLength ? "must be at least \(minimumLength) characters" : nil }
    }

    /// Text that is not empty.
    public static var nonEmptyText: OptionParser<String> {
        text.checked { $0.isEmpty ? "must not be empty" : nil }
    }

    /// A directory path, without trailing slashes (`/` stays `/`).
    public static var directory: OptionParser<String> {
        OptionParser(valueName: "DIR", parse: { text in
            var path = text
            while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
            return path
        }, format: { $0 })
    }
}

extension OptionParser where Value == [String] {
    /// Comma-separated items, each trimmed of spaces (`a.pem, b.der`).
    public static var commaSeparated: OptionParser<[String]> {
        OptionParser(valueName: "A,B,...", parse: { text in
            text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }, format: { $0.joined(separator: ",") })
    }
}

extension OptionParser where Value == URL {
    /// An absolute `http` or `https` URL with a host.
    public static var httpURL: OptionParser<URL> {
        OptionParser(valueName: "URL", refusal: "is not an http(s) URL", parse: { text in
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
                  url.host != nil else { return nil }
            return url
        }, format: { $0.absoluteString })
    }
}

extension OptionParser where Value == Int {
    /// A decimal integer within `range`.
    public static func integer(in range: ClosedRange<Int>) -> OptionParser<Int> {
        OptionParser(valueName: "N", refusal: "is not an integer in \(range.lowerBound)...\(range.upperBound)",
                     parse: { Int($0).flatMap { range.contains($0) ? $0 : nil } }, format: { String($0) })
    }
}

extension OptionParser where Value == Int64 {
    /// A decimal integer within `range`.
    public static func integer(in range: ClosedRange<Int64>) -> OptionParser<Int64> {
        OptionParser(valueName: "N", refusal: "is not an integer in \(range.lowerBound)...\(range.upperBound)",
                     parse: { Int64($0).flatMap { range.contains($0) ? $0 : nil } }, format: { String($0) })
    }
}

extension OptionParser where Value == Double {
    /// A positive number of seconds, at most a year (fractions allowed: `0.5`).
    public static var seconds: OptionParser<Double> {
        OptionParser(valueName: "SECONDS", refusal: "is not a positive number of seconds",
                     parse: { Double($0).flatMap { $0 > 0 && $0 <= 86_400 * 365 ? $0 : nil } },
                     format: { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : String($0) })
    }
}
