import DepotTestSupport
import Foundation
import Testing

/// Issue 11, defect 3: every `console` block of README.md is run, in order, in one shell against a real
/// `depot serve` (started against `depot simulator` on a copy of the sample), and what each command prints must
/// be what the README shows. In the README, `…` stands for text that varies between runs (dates, request IDs,
/// tokens, free bytes) or that is left out; whitespace is not compared.
@Suite("README shell examples")
struct ReadmeShellExampleTests {
    struct Example: Sendable {
        /// The command after `$ ` (continuation lines joined as the shell reads them).
        var command: String
        /// What the README shows under it.
        var expected: String
        /// The README line of the command.
        var line: Int
    }

    /// The examples of every fenced block whose info string is `console`.
    static func examples(_ markdown: String) -> [Example] {
        var examples: [Example] = []
        var inBlock = false
        var continuing = false
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if !inBlock {
                inBlock = line == "```console"
                continue
            }
            if line == "```" { inBlock = false; continuing = false; continue }
            if continuing {
                examples[examples.count - 1].command += "\n" + line
                continuing = line.hasSuffix("\\")
            } else if line.hasPrefix("$ ") {
                examples.append(Example(command: String(line.dropFirst(2)), expected: "", line: index + 1))
                continuing = line.hasSuffix("\\")
            } else if !examples.isEmpty {
                examples[examples.count - 1].expected += line + "\n"
            }
        }
        return examples
    }

    /// Whether `actual` is what `expected` shows: equal without whitespace, `…` matching anything.
    static func matches(expected: String, actual: String) -> Bool {
        let strip = { (text: String) in String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) }) }
        let parts = strip(expected).components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:))
        guard let pattern = try? NSRegularExpression(pattern: "^" + parts.joined(separator: ".*?") + "$", options: [.dotMatchesLineSeparators]) else {
            return false
        }
        let text = strip(actual)
        return pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    @Test func theMatcherTakesEllipsesAndIgnoresWhitespace() {
        #expect(Self.matches(expected: "{\"a\": 1, …}\n", actual: "{\"a\": 1,\n \"b\": 2}"))
        #expect(Self.matches(expected: "Date: …\nETag: \"x\"", actual: "Date: Tue, 01 Dec 2026\r\nETag: \"x\"\r\n"))
        #expect(!Self.matches(expected: "\"fits\": false", actual: "\"fits\": true"))
        #expect(!Self.matches(expected: "a…c", actual: "a b c d"))
        #expect(Self.matches(expected: "", actual: "\n"))
        #expect(!Self.matches(expected: "", actual: "output"))
    }

    @Test func theExamplesAreReadAsTheShellReadsThem() {
        let markdown = "```console\n$ curl -s \\\n    -d x http://h/\n{\"ok\": true}\n$ true\n```\n```\n$ not run\n```\n"
        let found = Self.examples(markdown)
        #expect(found.map(\.command) == ["curl -s \\\n    -d x http://h/", "true"])
        #expect(found.map(\.expected) == ["{\"ok\": true}\n", ""])
    }

    @Test(.timeLimit(.minutes(5)))
    func everyConsoleExampleRunsAsTheReadmeShowsIt() async throws {
        let readme = try String(contentsOfFile: TestDepot.repositoryRoot + "/README.md", encoding: .utf8)
        let examples = Self.examples(readme)
        #expect(examples.count >= 15, "\(examples.count) examples")
        let server = try await ReadmeServer.start()
        // The README's commands, pointed at this test's ports and binary.
        func localized(_ command: String) -> String {
            command.replacingOccurrences(of: "swift run depot", with: "depot")
                .replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(server.port)")
                .replacingOccurrences(of: "depot simulator receipt", with: "depot simulator receipt --simulator \(server.simulatorURL)")
        }
        var script = "cd '\(server.tree.path)'\nexport ADMIN='\(ReadmeServer.adminToken)'\n"
        for (index, example) in examples.enumerated() {
            script += "printf '\\n@@readme-example \(index)@@\\n'\n" + localized(example.command) + "\n"
        }
        let binaries = URL(fileURLWithPath: ReadmeServer.depot).deletingLastPathComponent().path
        let shell = try await ChildProcess.run("/bin/bash", ["-c", script],
                                               environment: ["PATH": binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")],
                                               timeout: 180)
        await server.stop()
        var outputs: [Int: String] = [:]
        for piece in shell.stdout.components(separatedBy: "\n@@readme-example ").dropFirst() {
            guard let end = piece.range(of: "@@\n"), let index = Int(piece[..<end.lowerBound]) else { continue }
            outputs[index] = String(piece[end.upperBound...])
        }
        #expect(outputs.count == examples.count, "\(shell.stderr)")
        for (index, example) in examples.enumerated() {
            let actual = outputs[index] ?? ""
            #expect(Self.matches(expected: example.expected, actual: actual),
                    "README.md line \(example.line): $ \(example.command)\nthe README shows:\n\(example.expected)\nthe real run printed:\n\(actual)")
        }
    }
}
