import ArgumentParsing
import Synchronization
import Testing

/// The command table: commands, groups of subcommands, `--help`, exit statuses and one-line errors.
@Suite struct CommandLineRunnerTests {
    static let table: CommandNode = .group("tool", summary: "A sample tool.", [
        .command(SampleServe.self),
        .command(SampleCommand.self),
        .group("ledger", summary: "Copy and back up the ledger.", [.command(SampleCopy.self), .command(SampleBackup.self)]),
        .group("simulator", summary: "A simulated App Store.", default: SampleSimulator.self, [.command(SampleBackup.self)]),
    ])

    /// Runs `arguments` against the table; returns status, stdout, stderr and what the commands did.
    static func run(_ arguments: [String], environment: [String: String] = [:],
                    table: CommandNode = table) async -> (status: Int32, stdout: String, stderr: String, ran: [String]) {
        let captured = Captured()
        let log = RunLog()
        let runner = CommandLineRunner(table, standardOutput: { text in captured.output.withLock { $0 += text } },
                                       standardError: { text in captured.errors.withLock { $0 += text } })
        let status = await Ran.$log.withValue(log) { await runner.run(arguments, environment: environment) }
        return (status, captured.stdout, captured.stderr, log.all)
    }

    @Test func runsTheNamedCommand() async {
        let result = await Self.run(["serve", "--port", "1"], environment: ["DEPOT_HOST": "::1"])
        #expect(result.status == 0)
        #expect(result.ran == ["serve ::1:1"])
        #expect(result.stderr.isEmpty)
        let seven = await Self.run(["publish", "--pack", "seven", "x"])
        #expect(seven.status == 7, "the command's own status")
    }

    @Test func runsASubcommandOfAGroup() async {
        let copy = await Self.run(["ledger", "copy", "--from", "sqlite", "--to", "postgres://x"])
        #expect(copy.status == 0 && copy.ran == ["copy sqlite → postgres://x"])
        let backup = await Self.run(["ledger", "backup", "--to", "b.sqlite"])
        #expect(backup.ran == ["backup → b.sqlite"])
    }

    @Test func aGroupWithItsOwnCommandRunsItWhenNoSubcommandIsNamed() async {
        #expect(await Self.run(["simulator"]).ran == ["simulator on 0"])
        #expect(await Self.run(["simulator", "--port", "9"]).ran == ["simulator on 9"])
        #expect(await Self.run(["simulator", "backup", "--to", "f"]).ran == ["backup → f"])
    }

    @Test(arguments: [
        (["--bogus-first"], "tool: missing command (serve, publish, ledger, simulator)"),
        ([], "tool: missing command (serve, publish, ledger, simulator)"),
        (["frobnicate"], "tool: unknown command \"frobnicate\" (serve, publish, ledger, simulator)"),
        (["ledger"], "tool: ledger: missing command (copy, backup)"),
        (["ledger", "move"], "tool: ledger: unknown command \"move\" (copy, backup)"),
        (["ledger", "copy", "--from", "a"], "tool: ledger: copy: --to is required"),
        (["serve", "--bogus"], "tool: serve: unknown option --bogus"),
        (["publish", "--pack", "fail-usage"], "tool: publish: the pack is refused"),
        (["publish", "--pack", "p", "--version", "x"], "tool: publish: --version: \"x\" is not an integer in 1...1000"),
    ])
    func usageErrorsExit64WithOneLine(_ arguments: [String], _ line: String) async {
        let result = await Self.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr == line + "\n")
        #expect(result.ran.isEmpty)
    }

    @Test func configurationErrorsExit1NamingTheOption() async {
        let bad = await Self.run(["serve"], environment: ["DEPOT_PORT": "99999"])
        #expect(bad.status == 1)
        #expect(bad.stderr == "tool: --port: \"99999\" is not an integer in 0...65535\n")
        let thrown = await Self.run(["publish", "--pack", "fail-config"])
        #expect(thrown.status == 1)
        #expect(thrown.stderr == "tool: --data: is not writable\n")
    }

    @Test func otherFailuresExit1WithTheCommandsName() async {
        let result = await Self.run(["publish", "--pack", "fail"])
        #expect(result.status == 1)
        #expect(result.stderr == "tool: publish: the disk caught fire\n")
    }

    @Test func prepareInjectsDependenciesAfterParsing() async {
        let table: CommandNode = .group("tool", summary: "", [.command(SampleCommand.self) { $0.injected = "a test's" }])
        let result = await Self.run(["publish", "--pack", "p", "--port", "3", "f"], table: table)
        #expect(result.ran == ["p v0 1048576 [] false ./var 3 [\"f\"] a test's"])
    }

    @Test func commandHelpIsGeneratedFromTheDeclarations() async {
        let help = await Self.run(["serve", "--help"])
        #expect(help.status == 0 && help.ran.isEmpty)
        let lines = help.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "usage: tool serve [options]")
        #expect(lines.contains("Serve."))
        for declaration in SampleSettings.declarations {
            let line = lines.first { $0.hasPrefix("  \(declaration.flag) \(declaration.valueName) ") }
            #expect(line?.contains("[\(declaration.environmentName ?? "-")]") == true, "\(declaration.name) in \(help.stdout)")
            #expect(line?.contains("(default: \(declaration.defaultText ?? "-"))") == true, "\(declaration.name) in \(help.stdout)")
        }
        #expect(lines.contains { $0.contains("--port PORT") && $0.contains("listen port; 0 picks one (default: 8080) [DEPOT_PORT]") },
                "backticks are dropped on a terminal")
        #expect(lines.contains { $0.contains("--format text|json") && $0.contains("how lines look (default: text)") })
        #expect(lines.contains { $0.contains("--receipt-validation VALIDATION") &&
                $0.contains("how receipts are checked: auto, server-api, verify-receipt (default: auto)") })
        #expect(lines.last?.hasPrefix("  --help") == true)
        // -h works too, and help wins over other mistakes on the line.
        #expect(await Self.run(["serve", "--port", "x", "-h"]).stdout == help.stdout)
    }

    @Test func derivedUsageLineListsRequiredOptionsAndArguments() async {
        let help = await Self.run(["publish", "--help"])
        #expect(help.stdout.hasPrefix("usage: tool publish --pack ID [options] FILE...\n"))
        #expect(help.stdout.contains("--pack ID") && help.stdout.contains("the pack (required)"))
        #expect(help.stdout.contains("version number (default: the next one)"))
        #expect(!help.stdout.contains("[DEPOT_PACK]"), "a command's own options have no variable")
        #expect(help.stdout.contains("[DEPOT_DATA]") && !help.stdout.contains("--host"))
    }

    @Test func groupHelpListsSubcommands() async {
        let overview = await Self.run(["--help"])
        #expect(overview.status == 0)
        #expect(overview.stdout.hasPrefix("usage: tool COMMAND [options]\n\nA sample tool.\n\ncommands:\n"))
        #expect(overview.stdout.contains("  ledger     Copy and back up the ledger. (copy, backup)\n"))
        let ledger = await Self.run(["ledger", "--help"])
        #expect(ledger.status == 0)
        #expect(ledger.stdout.hasPrefix("usage: tool ledger COMMAND [options]\n"))
        #expect(ledger.stdout.contains("  copy      Copy a ledger.\n") && ledger.stdout.contains("  backup    Back up a ledger.\n"))
        #expect(ledger.stdout.contains("`tool ledger COMMAND --help`"))
        let copy = await Self.run(["ledger", "copy", "--help"])
        #expect(copy.stdout.hasPrefix("usage: tool ledger copy --from LOCATION --to LOCATION\n"))
        // A group with a command of its own shows that command's options too.
        let simulator = await Self.run(["simulator", "--help"])
        #expect(simulator.stdout.hasPrefix("usage: tool simulator [COMMAND] [options]\n"))
        #expect(simulator.stdout.contains("--port N"))
    }

    @Test func configurationTableRendersEveryDeclaration() {
        let table = ConfigurationTable.markdown(SampleSettings.declarations)
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 + SampleSettings.declarations.count)
        #expect(lines[0] == "| flag | environment | default | meaning |")
        #expect(lines.contains("| `--port` | `DEPOT_PORT` | `8080` | listen port; `0` picks one |"))
        #expect(lines.contains("| `--log` | `DEPOT_LOG` | `on` | one line per request: `on`, `off` |"))
        #expect(lines.contains("| `--secret` | `DEPOT_SECRET` | none (signing off) | a key |"))
        #expect(lines.contains("| `--roots` | `DEPOT_ROOTS` | the built-in one | trusted files |"))
    }
}
