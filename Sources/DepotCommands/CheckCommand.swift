import ArgumentParsing
import DepotCore
import DepotServer
import Foundation

/// `depot check`: validates the catalog and content, prints every problem, exit 1 if any.
struct CheckCommand: Command {
    static let name = "check"
    static let synopsis: String? = "[--catalog DIR] [--content DIR]"
    static let summary = "Validate catalog/ and content/ (every manifest against its files) and print every problem."

    @OptionGroup(only: "catalog", "content") var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let summary = DepotCheck.run(paths: configuration.paths)
        for problem in summary.problems { say(problem.description) }
        if summary.problems.isEmpty {
            say("ok: \(summary.products) products, \(summary.packs) packs, \(summary.versions) versions, \(summary.files) files (\(summary.bytes) bytes) verified")
            return 0
        }
        FileHandle.standardError.write(Data("depot: check found \(summary.problems.count) problem(s)\n".utf8))
        return 1
    }
}
