/// A type whose options need no parser in their declaration: it brings its own.
public protocol OptionValue: Sendable {
    static var optionParser: OptionParser<Self> { get }
}

extension String: OptionValue {
    public static var optionParser: OptionParser<String> { .text }
}

extension Int: OptionValue {
    public static var optionParser: OptionParser<Int> { .integer(in: Int.min...Int.max).named("N") }
}

extension Int64: OptionValue {
    public static var optionParser: OptionParser<Int64> { .integer(in: Int64.min...Int64.max).named("N") }
}

extension Bool: OptionValue {
    /// `true`, `1`, `yes`, `on` and `false`, `0`, `no`, `off`, in any case; the flag alone means true.
    public static var optionParser: OptionParser<Bool> {
        OptionParser(valueName: "BOOL", isSwitch: true, parse: { (text: String) throws(InvalidOptionValue) -> Bool in
            switch text.lowercased() {
            case "true", "1", "yes", "on": return true
            case "false", "0", "no", "off": return false
            default: throw InvalidOptionValue("\"\(text)\" is not true or false")
            }
        }, format: { $0 ? "true" : "false" })
    }
}

/// An option whose values are a closed list of words, one case each (`--account-policy transfer|first|shared`).
/// Declaring one is one line: `enum LogFormat: String, CaseIterable, EnumeratedOption { case text, json }`.
public protocol EnumeratedOption: OptionValue, CaseIterable, RawRepresentable where RawValue == String {
    /// The case `text` names; by default its raw value, exactly.
    static func matching(_ text: String) -> Self?
}

extension EnumeratedOption {
    public static func matching(_ text: String) -> Self? { Self(rawValue: text) }

    public static var optionParser: OptionParser<Self> {
        let names = allCases.map(\.rawValue)
        return OptionParser(valueName: names.joined(separator: "|"), allowedValues: names,
                            parse: { (text: String) throws(InvalidOptionValue) -> Self in
                                guard let value = matching(text) else {
                                    throw InvalidOptionValue("\"\(text)\" is not one of \(names.joined(separator: ", "))")
                                }
                                return value
                            }, format: { $0.rawValue })
    }
}

/// `on` or `off` (`--access-log`, `--consumption-info`); `true`/`false`, `yes`/`no` and `1`/`0` are
/// accepted too, in any case.
public enum Toggle: String, Sendable, CaseIterable, EnumeratedOption {
    case on
    case off

    /// `true` for `on`.
    public var isOn: Bool { self == .on }

    public static func matching(_ text: String) -> Toggle? {
        switch text.lowercased() {
        case "on", "true", "1", "yes": return .on
        case "off", "false", "0", "no": return .off
        default: return nil
        }
    }
}
