/// A property that contributes to an options type's declarations (the wrappers of this module).
protocol OptionContainer {
    /// The options this property declares, in order.
    var declarations: [OptionDeclaration] { get }
    /// The `--help` name of the positional arguments, if this property takes them.
    var positionalName: String? { get }
    /// The settings among these options whose values are not their defaults.
    var changedSettings: [SettingValue] { get }
}

extension OptionContainer {
    var positionalName: String? { nil }
    var changedSettings: [SettingValue] { [] }
}
