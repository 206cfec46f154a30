/// A coding key that asks ``WireJSON`` for line breaks, so that a stored document stays readable and
/// byte-stable (a manifest puts each file on its own line). A line break is followed by one space per level of
/// nesting. Keys that do not conform are written inline.
public protocol WireLayoutKey: CodingKey {
    /// The member starts a new line.
    var startsLine: Bool { get }
    /// The member is an array whose elements each start a new line.
    var elementsStartLines: Bool { get }
}
