import ArgumentParsing
import DepotCommands
import DepotServer
import DepotTestSupport
import Foundation
import Ledger
import Synchronization
import Testing

/// Issue 12: every option is declared once; `--help`, the README's table and the parser come from it.
@Suite struct ConfigurationDeclarationTests {
    /// The rows of the README's configuration table (from its header line to the first line that is not a row).
    static func readmeTable() throws -> String {
        let readme = try String(contentsOfFile: TestDepot.repositoryRoot + "/README.md", encoding: .utf8)
        let section = try #require(readme.range(of: "\n## Configuration\n"))
        let lines = readme[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("| flag |") })
        let rows = lines[start...].prefix { $0.hasPrefix("|") }
        return rows.joined(separator: "\n") + "\n"
    }

    @Test func readmeTableIsTheDeclarations() throws {
        let generated = ConfigurationTable.markdown(DepotConfiguration.declarations)
        let readme = try Self.readmeTable()
        #expect(readme == generated, "README.md's configuration table differs from the declarations; paste this:\n\(generated)")
    }

    @Test func everySpecOptionIsDeclaredWithItsVariable() {
        let declarations = DepotConfiguration.declarations
        for option in CommandLineServeTests.specOptions {
            let declaration = declarations.first { $0.name == option.name }
            #expect(declaration?.environmentName == "DEPOT_" + option.name.uppercased().replacingOccurrences(of: "-", with: "_"), "\(option.name)")
            if let value = option.defaultText {
                #expect(declaration?.defaultText == value, "\(option.name)")
            }
        }
    }

    @Test func typedValuesFromFlagsAndEnvironment() throws {
        let configuration = try DepotConfiguration.parse(
            ["--account-policy", "shared", "--access-log", "off", "--catalog", "/srv/catalog/", "--apple-root-certs", "a.pem, b.pem"],
            environment: ["DEPOT_PORT": "0", "DEPOT_ALLOW_SANDBOX": "false", "DEPOT_ADMIN_TOKEN": ""])
        #expect(configuration.accountPolicy == AccountPolicy.shared)
        #expect(configuration.accessLog == .off)
        #expect(configuration.paths.catalogDirectory == "/srv/catalog")
        #expect(configuration.appleRootCertificateFiles == ["a.pem", "b.pem"])
        #expect(configuration.port == 0)
        #expect(configuration.allowSandbox == false)
        #expect(configuration.adminToken == nil, "an empty variable turns the admin API off")
    }

    /// Runs depot's own command table in-process; returns status and output.
    static func depot(_ arguments: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        let output = Mutex<String>("")
        let errors = Mutex<String>("")
        let runner = CommandLineRunner(DepotCommandLine.root, standardOutput: { text in output.withLock { $0 += text } },
                                       standardError: { text in errors.withLock { $0 += text } })
        let status = await runner.run(arguments, environment: [:])
        return (status, output.withLock { $0 }, errors.withLock { $0 })
    }

    @Test func everyCommandHasHelpFromItsDeclarations() async {
        let overview = await Self.depot(["--help"])
        #expect(overview.status == 0)
        for command in DepotCommandLine.root.children {
            #expect(overview.stdout.contains("  \(command.name) "), "\(command.name) in the overview")
            let help = await Self.depot([command.name, "--help"])
            #expect(help.status == 0, "\(command.name)")
            #expect(help.stdout.hasPrefix("usage: depot \(command.name) "), "\(help.stdout)")
            if command.children.isEmpty {
                #expect(help.stdout.contains("  --help "), "\(command.name)")
            }
            // A group lists its subcommands, and each has its own help.
            for subcommand in command.children {
                #expect(help.stdout.contains("  \(subcommand.name) "), "\(command.name) \(subcommand.name) in the group's help")
                let own = await Self.depot([command.name, subcommand.name, "--help"])
                #expect(own.status == 0 && own.stdout.hasPrefix("usage: depot \(command.name) \(subcommand.name) "), "\(own.stdout)")
                #expect(own.stdout.contains("  --help "), "\(command.name) \(subcommand.name)")
            }
        }
        let check = await Self.depot(["check", "--help"])
        #expect(check.stdout.contains("--catalog DIR") && check.stdout.contains("[DEPOT_CATALOG]") && !check.stdout.contains("--port"))
        let token = await Self.depot(["token", "--help"])
        #expect(token.stdout.contains("--token-ttl SECONDS") && token.stdout.contains("[DEPOT_TOKEN_SECRET]"))
        #expect(token.stdout.contains("--pack ID") && token.stdout.contains("(required)"))
    }

    @Test func fetchParallelIsAnOptionNotAVariable() throws {
        let base = ["--server", "http://127.0.0.1:1", "--receipt", "r.txt", "--pack", "p", "--out", "o"]
        #expect(try FetchCommand.parse(base, environment: ["DEPOT_FETCH_PARALLEL": "1", "DEPOT_PARALLEL": "2"]).parallel == 4)
        #expect(try FetchCommand.parse(base + ["--parallel", "8"], environment: [:]).parallel == 8)
        #expect(try FetchCommand.parse(base + ["--transaction", "a", "--transaction", "b"], environment: [:]).transactions == ["a", "b"])
        #expect { _ = try FetchCommand.parse(base + ["--parallel", "0"], environment: [:]) } throws: { error in
            (error as? UsageError)?.description == "--parallel: \"0\" is not an integer in 1...64"
        }
    }

    @Test func fetchUsageErrorsExit64() async {
        let missing = await Self.depot(["fetch", "--server", "http://127.0.0.1:1", "--pack", "p", "--out", "o"])
        #expect(missing.status == 64)
        #expect(missing.stderr == "depot: fetch: give exactly one of --receipt FILE, --transaction FILE or --token TOKEN\n")
        let parallel = await Self.depot(["fetch", "--server", "http://127.0.0.1:1", "--receipt", "r", "--pack", "p", "--out", "o",
                                         "--parallel", "many"])
        #expect(parallel.status == 64)
        #expect(parallel.stderr.hasPrefix("depot: fetch: --parallel: "))
    }
}
