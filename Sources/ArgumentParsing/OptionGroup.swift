/// Options declared by another type, taken in whole or in part: a command that works on the files takes
/// the `--catalog` and `--content` settings of the server's configuration, with their defaults,
/// environment variables and checks, without declaring them again.
///
///     @OptionGroup(only: "catalog", "content") var configuration: DepotConfiguration
@propertyWrapper
public struct OptionGroup<Group: ParsableOptions>: Sendable, OptionContainer {
    /// The group, built from the same parse (the options it does not take keep their defaults).
    public var wrappedValue: Group
    /// The names taken from `Group`; nil for all of them.
    public let names: Set<String>?

    /// Every option of `Group`.
    public init() {
        names = nil
        wrappedValue = Self.build(names: nil)
    }

    /// Only the named options of `Group`; the others keep their defaults.
    public init(only names: String...) {
        self.names = Set(names)
        wrappedValue = Self.build(names: self.names)
    }

    private static func build(names: Set<String>?) -> Group {
        guard let current = ParsedValues.current else { return Group() }
        return ParsedValues.$current.withValue(current.restricted(to: names)) { Group() }
    }

    var changedSettings: [SettingValue] {
        wrappedValue.changedSettings.filter { names?.contains($0.declaration.name) ?? true }
    }

    var declarations: [OptionDeclaration] {
        let all = Group.declarations
        guard let names else { return all }
        let known = Set(all.map(\.name))
        precondition(names.isSubset(of: known), "\(Group.self) declares no option named \(names.subtracting(known).sorted())")
        return all.filter { names.contains($0.name) }
    }
}
