import DepotServer
import Foundation
import DepotCore

/// `depot check`: validates the catalog and content, prints every problem, exit 1 if any.
enum CheckCommand: Command {
    static let name = "check"
    static let synopsis = "[--catalog DIR] [--content DIR]"
    static let summary = "Validate catalog/ and content/ (every manifest against its files) and print every problem."
    static let options = DepotConfiguration.options(["catalog", "content"])
    static let takesPositional = false

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        let paths = DepotPaths(catalogDirectory: arguments.values.string("catalog") ?? "./catalog",
                               contentDirectory: arguments.values.string("content") ?? "./content", dataDirectory: "")
        let summary = DepotCheck.run(paths: paths)
        for problem in summary.problems { say(problem.description) }
        if summary.problems.isEmpty {
            say("ok: \(summary.products) products, \(summary.packs) packs, \(summary.versions) versions, \(summary.files) files (\(summary.bytes) bytes) verified")
            return 0
        }
        FileHandle.standardError.write(Data("depot: check found \(summary.problems.count) problem(s)\n".utf8))
        return 1
    }
}
