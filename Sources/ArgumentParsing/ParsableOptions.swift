/// A type whose stored properties declare options (``Setting``, ``Option``, ``Arguments``,
/// ``OptionGroup``). The declarations are read from a default instance, so each option is declared once,
/// where its value lives.
public protocol ParsableOptions: Sendable {
    /// Every property at its default.
    init()
}

extension ParsableOptions {
    /// Every option this type declares, in declaration order.
    public static var declarations: [OptionDeclaration] { OptionInventory(of: Self.self).declarations }

    /// The settings whose values differ from their defaults, in declaration order, each with its value as its
    /// flag would take it (`depot deploy systemd` writes a `depot serve` command from them).
    public var changedSettings: [SettingValue] {
        Mirror(reflecting: self).children.flatMap { ($0.value as? any OptionContainer)?.changedSettings ?? [] }
    }

    /// The `--help` name of the positional arguments, or nil when the type takes none.
    public static var positionalName: String? { OptionInventory(of: Self.self).positionalName }

    /// The value these arguments describe: a flag wins over its environment variable, which wins over the
    /// default. Throws ``UsageError`` (unknown option, missing or bad value of an ``Option``, a required
    /// option missing, stray arguments) or ``ConfigurationError`` (a ``Setting`` whose value does not parse).
    /// `--help` is not handled here (see ``CommandLineRunner``).
    public static func parse(_ arguments: [String], environment: [String: String]) throws -> Self {
        let inventory = OptionInventory(of: Self.self)
        let scanned = try ArgumentScanner.scan(arguments, declarations: inventory.declarations,
                                               takesPositional: inventory.positionalName != nil)
        var values: [String: ParsedValue] = [:]
        for declaration in inventory.declarations {
            var texts = scanned.flags[declaration.name] ?? []
            if texts.isEmpty, let variable = declaration.environmentName, let text = environment[variable] {
                texts = [text]
            }
            guard !texts.isEmpty else {
                if declaration.isRequired { throw UsageError("\(declaration.flag) is required") }
                continue
            }
            do {
                values[declaration.name] = ParsedValue(value: try declaration.parseList(texts))
            } catch {
                if declaration.environmentName != nil { throw ConfigurationError(option: declaration.name, error.description) }
                throw UsageError("\(declaration.flag): \(error)")
            }
        }
        if inventory.positionalName != nil {
            values[ParsedValues.argumentsKey] = ParsedValue(value: scanned.positional)
        }
        return ParsedValues.$current.withValue(ParsedValues(values: values)) { Self() }
    }
}

/// The declarations of an options type, read with `Mirror` from an instance built outside any parse.
struct OptionInventory {
    var declarations: [OptionDeclaration] = []
    var positionalName: String?

    init<Options: ParsableOptions>(of type: Options.Type) {
        let instance = ParsedValues.$current.withValue(nil) { Options() }
        for child in Mirror(reflecting: instance).children {
            guard let container = child.value as? any OptionContainer else { continue }
            declarations += container.declarations
            if let name = container.positionalName {
                precondition(positionalName == nil, "\(Options.self) declares positional arguments twice")
                positionalName = name
            }
        }
        var seen = Set<String>()
        for declaration in declarations {
            precondition(seen.insert(declaration.name).inserted, "\(Options.self) declares --\(declaration.name) twice")
        }
    }
}
