/// One thing wrong with the catalog or content, located by file and field.
public struct CatalogProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as the user named it (e.g. `catalog/products.json`).
    public var file: String
    /// A JSON path into the file (`products[2].type`), or empty for the whole file.
    public var field: String
    public var message: String

    public init(file: String, field: String, message: String) {
        self.file = file
        self.field = field
        self.message = message
    }

    /// `file: field: message`.
    public var description: String {
        field.isEmpty ? "\(file): \(message)" : "\(file): \(field): \(message)"
    }
}

/// Several problems at once (a catalog is checked completely, not up to its first mistake).
public struct CatalogProblems: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [CatalogProblem]

    public init(_ problems: [CatalogProblem]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
