import DepotTestSupport
import Foundation
import Testing

/// Issue 11, defect 1: every ```swift block of README.md builds in a small package that depends on this
/// repository's `DepotClient` and runs against a real `depot serve` with the simulated App Store, so the README's
/// client sample cannot drift from the library again.
@Suite("README Swift snippets")
struct ReadmeSwiftSnippetTests {
    /// The contents of every fenced block whose info string is `swift`.
    static func swiftBlocks(_ markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil {
                if line == "```swift" { current = [] }
            } else if line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current!.append(line)
            }
        }
        return blocks
    }

    /// The host the README's samples name, replaced by the loopback server.
    static let exampleHost = "https://depot.example.com"

    /// A package with one file per block and a `main.swift` that calls the functions the README declares.
    static func writePackage(at root: String, blocks: [String], serverURL: String) throws {
        let repository = TestDepot.repositoryRoot
        let identity = URL(fileURLWithPath: repository).lastPathComponent.lowercased()
        let manifest = """
        // swift-tools-version: 6.0
        import PackageDescription

        let package = Package(
            name: "ReadmeSnippets",
            dependencies: [.package(path: "\(repository)")],
            targets: [
                .executableTarget(name: "ReadmeSnippets", dependencies: [.product(name: "DepotClient", package: "\(identity)")]),
            ]
        )

        """
        let sources = root + "/Sources/ReadmeSnippets"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: root + "/Package.swift"))
        for (index, block) in blocks.enumerated() {
            let text = block.replacingOccurrences(of: exampleHost, with: serverURL)
            try Data(text.utf8).write(to: URL(fileURLWithPath: sources + "/ReadmeBlock\(index + 1).swift"))
        }
        let main = """
        import Foundation

        let arguments = CommandLine.arguments
        let receipt = try Data(contentsOf: URL(fileURLWithPath: arguments[1]))
        print("products:", try await shopProductIDs().joined(separator: " "))
        try await installLevel2(receiptData: receipt, playerID: "player-42", levelsDirectory: URL(fileURLWithPath: arguments[2]))
        print("installLevel2 returned")

        """
        try Data(main.utf8).write(to: URL(fileURLWithPath: sources + "/main.swift"))
    }

    @Test(.timeLimit(.minutes(20)))
    func everySwiftBlockBuildsAndRunsAgainstALoopbackServer() async throws {
        let readme = try String(contentsOfFile: TestDepot.repositoryRoot + "/README.md", encoding: .utf8)
        let blocks = Self.swiftBlocks(readme)
        #expect(blocks.contains { $0.contains("func installLevel2(receiptData: Data, playerID: String, levelsDirectory: URL)") })
        #expect(blocks.contains { $0.contains("func shopProductIDs()") })
        #expect(blocks.allSatisfy { $0.contains(Self.exampleHost) || !$0.contains("DepotClient(baseURL:") })

        let server = try await ReadmeServer.start()
        let package = TemporaryDirectory("readme-snippets")
        try Self.writePackage(at: package.path, blocks: blocks, serverURL: server.baseURL)
        let swift = try #require(ProcessRunner.which("swift"), "swift on PATH")
        let started = ContinuousClock.now
        let build = try await ChildProcess.run(swift, ["build", "--package-path", package.path], timeout: 1200)
        print("[readme] the README's Swift blocks built in \(ContinuousClock.now - started)")
        #expect(build.status == 0, "\(build.stdout)\n\(build.stderr)")
        guard build.status == 0 else { await server.stop(); return }

        let receipt = try await server.mint("com.example.depot.level2")
        package.write("receipt.txt", receipt + "\n")
        let levels = package.path + "/levels"
        // A home of its own, so the product-list cache starts empty and stays out of the user's.
        let run = try await ChildProcess.run(package.path + "/.build/debug/ReadmeSnippets", [package.path + "/receipt.txt", levels],
                                             environment: ["HOME": package.path, "XDG_CACHE_HOME": package.path + "/cache"], timeout: 120)
        await server.stop()
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("products: com.example.depot.coins100 com.example.depot.hints30 com.example.depot.level2"), "\(run.stdout)")
        #expect(run.stdout.contains("100 %"), "\(run.stdout)")
        #expect(run.stdout.hasSuffix("installLevel2 returned\n"), "\(run.stdout)")
        // The pack as the sample content holds it, every file in place.
        let sample = TestDepot.repositoryRoot + "/content/level2"
        let live = try String(contentsOfFile: sample + "/current", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        for file in ["README.txt", "stages.bin"] {
            let installed = FileManager.default.contents(atPath: levels + "/level2/" + file)
            #expect(installed != nil && installed == FileManager.default.contents(atPath: sample + "/\(live)/" + file), "\(file)")
        }
    }
}
