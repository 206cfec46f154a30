import Foundation
/// One command-line option: `--kebab-case` flag and `DEPOT_UPPER_SNAKE` environment variable (spec §3).
public struct OptionSpec: Sendable {
    public let name: String
    public let defaultValue: String?
    public let help: String
    /// `true` for a switch that may be given without a value (`--allow-sandbox` means true).
    public let isBoolean: Bool
    public let valueName: String
    /// Section 3 options also come from `DEPOT_*` variables; a command's own options (`--pack`) do not.
    public let readsEnvironment: Bool
    /// May be given more than once (values are joined with commas).
    public let repeatable: Bool

    public init(_ name: String, default defaultValue: String?, _ help: String, isBoolean: Bool = false,
                valueName: String = "VALUE", readsEnvironment: Bool = true, repeatable: Bool = false) {
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
        self.isBoolean = isBoolean
        self.valueName = valueName
        self.readsEnvironment = readsEnvironment
        self.repeatable = repeatable
    }

    /// A command's own option: a flag only.
    public static func flag(_ name: String, default defaultValue: String? = nil, _ help: String, valueName: String = "VALUE",
                            isBoolean: Bool = false) -> OptionSpec {
        OptionSpec(name, default: defaultValue, help, isBoolean: isBoolean, valueName: valueName, readsEnvironment: false)
    }

    /// `DEPOT_` + upper snake case.
    public var environmentName: String {
        "DEPOT_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }
}

/// A value that cannot be used; stops start-up with one line naming the option.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let option: String
    public let message: String

    public init(option: String, _ message: String) {
        self.option = option
        self.message = message
    }

    public var description: String { option.isEmpty ? message : "--\(option): \(message)" }
}

/// Resolved option values: flag, else environment, else default.
public struct OptionValues: Sendable {
    public var values: [String: String]

    public init(_ values: [String: String]) {
        self.values = values
    }

    public func string(_ name: String) -> String? { values[name] }

    public func int(_ name: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let text = values[name], let value = Int(text), range.contains(value) else {
            throw ConfigurationError(option: name, "\"\(values[name] ?? "")\" is not an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    public func seconds(_ name: String) throws(ConfigurationError) -> Double {
        guard let text = values[name], let value = Double(text), value > 0, value <= 86_400 * 365 else {
            throw ConfigurationError(option: name, "\"\(values[name] ?? "")\" is not a positive number of seconds")
        }
        return value
    }

    public func bool(_ name: String) throws(ConfigurationError) -> Bool {
        switch values[name]?.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigurationError(option: name, "\"\(values[name] ?? "")\" is not true or false")
        }
    }
}
