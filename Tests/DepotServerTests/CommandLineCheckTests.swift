import DepotTestSupport
import Foundation
import Testing

/// spec §5 `depot check`: validates `catalog/` and `content/`, prints every problem with file and field, exit 1 if any.
@Suite struct CommandLineCheckTests {
    /// Runs the built `depot` in `directory`, off the cooperative pool.
    static func depot(_ arguments: [String], in directory: String, environment: [String: String] = [:]) async throws -> ProcessResult {
        try await OffPool.run {
            try ProcessRunner.run(ProcessRunner.depotExecutable, arguments, environment: environment, currentDirectory: directory)
        }
    }

    static func sampleTree() throws -> TemporaryDirectory {
        let tree = TemporaryDirectory("depot-check")
        try TestDepot.copySample(into: tree.path)
        return tree
    }

    /// ``sampleTree()`` with its `cp` children waited for off the cooperative pool (async callers).
    static func sampleTree() async throws -> TemporaryDirectory {
        let tree = TemporaryDirectory("depot-check")
        try await TestDepot.copySample(into: tree.path)
        return tree
    }

    @Test func sampleIsClean() async throws {
        let tree = try await Self.sampleTree()
        let result = try await Self.depot(["check"], in: tree.path)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("ok: 4 products, 2 packs, 2 versions"), "\(result.stdout)")
        #expect(result.stderr.isEmpty)
        // The repository's own tree, in place, is clean too (what ships is what `depot check` accepts).
        let repository = try await Self.depot(["check", "--catalog", TestDepot.repositoryRoot + "/catalog",
                                               "--content", TestDepot.repositoryRoot + "/content"], in: tree.path)
        #expect(repository.status == 0, "\(repository.stdout)")
    }

    struct BreakRow: Sendable, CustomTestStringConvertible {
        let name: String
        let breakTree: @Sendable (TemporaryDirectory) throws -> Void
        /// Lines (prefixes) that must be printed: `file: field: ` or `file: message`.
        let expected: [String]
        var testDescription: String { name }
    }

    static func edit(_ tree: TemporaryDirectory, _ relative: String, _ transform: (String) -> String) throws {
        let path = tree.path + "/" + relative
        let text = try TreeFiles.text(path)
        let changed = transform(text)
        precondition(changed != text, "the edit of \(relative) changed nothing")
        try Data(changed.utf8).write(to: URL(fileURLWithPath: path))
    }

    static let rows: [BreakRow] = [
        BreakRow(name: "bad JSON", breakTree: { $0.write("catalog/products.json", "{\"products\": [") },
                 expected: ["./catalog/products.json: not valid JSON"]),
        BreakRow(name: "wrong top level", breakTree: { $0.write("catalog/products.json", "[]") },
                 expected: ["./catalog/products.json: "]),
        BreakRow(name: "bad type", breakTree: { try edit($0, "catalog/products.json") { $0.replacingOccurrences(of: "\"non-renewing\"", with: "\"gift\"") } },
                 expected: ["./catalog/products.json: products[1].type: "]),
        BreakRow(name: "bad id and status in one product",
                 breakTree: { try edit($0, "catalog/products.json") {
                     $0.replacingOccurrences(of: "\"com.example.depot.coins100\"", with: "\"coins 100\"")
                         .replacingOccurrences(of: "\"status\": \"live\"\n    },\n    {\n      \"id\": \"com.example.depot.hints30\"",
                                               with: "\"status\": \"on sale\"\n    },\n    {\n      \"id\": \"com.example.depot.hints30\"")
                 } },
                 expected: ["./catalog/products.json: products[0].id: ", "./catalog/products.json: products[0].status: "]),
        BreakRow(name: "unknown pack", breakTree: { try edit($0, "catalog/products.json") { $0.replacingOccurrences(of: "\"level3\"", with: "\"level9\"") } },
                 expected: ["./catalog/products.json: products[3].pack: "]),
        BreakRow(name: "manifest hash mismatch",
                 breakTree: { tree in
                     var bytes = tree.read("content/level2/1/README.txt") ?? []
                     bytes[0] ^= 0x20
                     tree.write("content/level2/1/README.txt", bytes)
                 },
                 expected: ["./content/level2/1/manifest.json: files[0].sha256: "]),
        BreakRow(name: "size mismatch",
                 breakTree: { tree in tree.write("content/level2/1/stages/index.json", (tree.read("content/level2/1/stages/index.json") ?? []) + [0x0A]) },
                 expected: ["./content/level2/1/manifest.json: files[2].size: "]),
        BreakRow(name: "chunk hash mismatch",
                 breakTree: { try edit($0, "content/level2/1/manifest.json") {
                     $0.replacingOccurrences(of: "33c80fba220a50a87be7bc039acecf4b0b112cbe6fc37ff5004391c0ec623366",
                                             with: String(repeating: "0", count: 64))
                 } },
                 expected: ["./content/level2/1/manifest.json: files[1].chunks[1].sha256: "]),
        BreakRow(name: "file missing", breakTree: { try FileManager.default.removeItem(atPath: $0.path + "/content/level2/1/stages/index.json") },
                 expected: ["./content/level2/1/stages/index.json: "]),
        BreakRow(name: "extra file", breakTree: { $0.write("content/level3/1/bonus/notes.txt", "not in the manifest") },
                 expected: ["./content/level3/1/bonus/notes.txt: is not listed in the manifest"]),
        BreakRow(name: "current pointing nowhere", breakTree: { $0.write("content/level3/current", "7\n") },
                 expected: ["./content/level3/current: names version 7"]),
        BreakRow(name: "current not a number", breakTree: { $0.write("content/level2/current", "latest\n") },
                 expected: ["./content/level2/current: "]),
        BreakRow(name: "current missing", breakTree: { try FileManager.default.removeItem(atPath: $0.path + "/content/level2/current") },
                 expected: ["./content/level2/current: "]),
        BreakRow(name: "manifest missing", breakTree: { try FileManager.default.removeItem(atPath: $0.path + "/content/level3/1/manifest.json") },
                 expected: ["./content/level3/1/manifest.json: "]),
        BreakRow(name: "manifest not JSON", breakTree: { $0.write("content/level3/1/manifest.json", "{") },
                 expected: ["./content/level3/1/manifest.json: "]),
        BreakRow(name: "validator record not JSON", breakTree: { $0.write("catalog/lists.json", "{") },
                 expected: ["./catalog/lists.json: is not a JSON object"]),
        BreakRow(name: "validator record with a wrong entry", breakTree: { $0.write("catalog/lists.json", "{\"products_v1.json\": 5}") },
                 expected: ["./catalog/lists.json: products_v1.json: "]),
        BreakRow(name: "validator record with a bad time",
                 breakTree: { try edit($0, "catalog/lists.json") { $0.replacingOccurrences(of: "\"lastModified\": \"20", with: "\"lastModified\": \"x20") } },
                 expected: ["./catalog/lists.json: products_v1.json.lastModified: ", "./catalog/lists.json: products_v2.json.lastModified: "]),
        BreakRow(name: "several problems at once",
                 breakTree: { tree in
                     try edit(tree, "catalog/products.json") { $0.replacingOccurrences(of: "\"auto-renewable\"", with: "\"monthly\"") }
                     tree.write("content/level2/1/extra.bin", [1, 2, 3])
                     tree.write("content/level3/current", "4\n")
                 },
                 expected: ["./catalog/products.json: products[3].type: ", "./content/level2/1/extra.bin: is not listed in the manifest",
                            "./content/level3/current: names version 4"]),
    ]

    @Test(arguments: rows)
    func brokenTreeIsReported(_ row: BreakRow) async throws {
        let tree = try await Self.sampleTree()
        try row.breakTree(tree)
        let result = try await Self.depot(["check"], in: tree.path)
        #expect(result.status == 1, "\(result.stdout)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        for expected in row.expected {
            #expect(lines.contains { $0.hasPrefix(expected) }, "\(expected) in:\n\(result.stdout)")
        }
        #expect(!result.stdout.contains("ok:"))
        #expect(result.stderr.contains("problem"), "a summary on stderr")
        // Every printed line names a file under the tree.
        #expect(lines.allSatisfy { $0.hasPrefix("./catalog/") || $0.hasPrefix("./content/") }, "\(lines)")
    }

    @Test func pathsComeFromTheOptionsAndTheEnvironment() async throws {
        let tree = try await Self.sampleTree()
        tree.write("content/level3/current", "9\n")
        let elsewhere = TemporaryDirectory("depot-check-cwd")
        let byFlag = try await Self.depot(["check", "--catalog", tree.path + "/catalog", "--content", tree.path + "/content"], in: elsewhere.path)
        #expect(byFlag.status == 1)
        #expect(byFlag.stdout.contains(tree.path + "/content/level3/current: names version 9"), "\(byFlag.stdout)")
        let byEnvironment = try await Self.depot(["check"], in: elsewhere.path,
                                                 environment: ["DEPOT_CATALOG": tree.path + "/catalog", "DEPOT_CONTENT": tree.path + "/content"])
        #expect(byEnvironment.stdout == byFlag.stdout)
        // Nothing there at all.
        let empty = try await Self.depot(["check"], in: elsewhere.path)
        #expect(empty.status == 1)
        #expect(empty.stdout.contains("./catalog/products.json: "))
    }

    @Test func checkUsageErrors() async throws {
        let tree = try await Self.sampleTree()
        for arguments in [["check", "--bogus"], ["check", "extra"], ["check", "--catalog"], ["frobnicate"]] {
            let result = try await Self.depot(arguments, in: tree.path)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        let help = try await Self.depot(["check", "--help"], in: tree.path)
        #expect(help.status == 0)
        #expect(help.stdout.contains("--catalog") && help.stdout.contains("--content"))
    }
}
