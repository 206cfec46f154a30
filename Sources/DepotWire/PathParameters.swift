/// The parameters a ``PathTemplate`` matched, in pattern order.
public struct PathParameters: Sendable, Hashable {
    public let values: [Pair]

    public struct Pair: Sendable, Hashable {
        public let name: String
        public let value: String
    }

    init(_ values: [(String, String)]) {
        self.values = values.map { Pair(name: $0.0, value: $0.1) }
    }

    /// The value of parameter `name` (decoded), or nil when the template has no such parameter.
    public subscript(name: String) -> String? {
        values.first { $0.name == name }?.value
    }
}
