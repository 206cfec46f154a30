import ArgumentParsing
import DepotTestSupport
import Foundation
import Testing
import DepotCommands
import DepotServer
#if canImport(Glibc)
import Glibc
#endif

/// Issue 11, missing piece 5 (operations.md §5): `depot deploy systemd` prints a unit that systemd accepts, whose
/// `ExecStart=` is the full `depot serve` command.
@Suite("depot deploy systemd")
struct SystemdUnitTests {
    /// `systemd-analyze`, installed from Debian's packages when missing (as root, the way CI's machine is set up).
    static func systemdAnalyze() async throws -> String {
        if let found = ProcessRunner.which("systemd-analyze") { return found }
        #expect(getuid() == 0, "systemd-analyze is missing; install Debian's systemd package")
        _ = try await ChildProcess.run("/usr/bin/apt-get", ["update", "-qq"], timeout: 600)
        let installed = try await ChildProcess.run("/usr/bin/apt-get", ["install", "-y", "-qq", "systemd"],
                                                   environment: ["DEBIAN_FRONTEND": "noninteractive"], timeout: 900)
        #expect(installed.status == 0, "\(installed.stderr)")
        return try #require(ProcessRunner.which("systemd-analyze"))
    }

    /// The words of an `ExecStart=` value, unquoted as systemd does.
    static func words(_ value: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        var started = false
        for character in value {
            if escaped { current.append(character); escaped = false; continue }
            if quoted {
                if character == "\\" { escaped = true } else if character == "\"" { quoted = false } else { current.append(character) }
                continue
            }
            if character == "\"" { quoted = true; started = true } else if character == " " {
                if started { words.append(current); current = ""; started = false }
            } else { current.append(character); started = true }
        }
        if started { words.append(current) }
        return words.map { $0.replacingOccurrences(of: "%%", with: "%").replacingOccurrences(of: "$$", with: "$") }
    }

    @Test func theUnitVerifiesAndItsExecStartIsTheServeConfiguration() async throws {
        let tree = try await CommandLineServeTests.sampleTree()
        let arguments = ["deploy", "systemd", "--user", "root", "--host", "0.0.0.0", "--port", "443", "--data", "state",
                         "--admin-token", "admin token with spaces % and $", "--trusted-proxies", "10.0.0.0/8,::1",
                         "--log-format", "json", "--ops-listen", "127.0.0.1:9090", "--catalog-max-age", "60"]
        let result = try await ChildProcess.run(ProcessRunner.depotExecutable, arguments, directory: tree.path)
        #expect(result.status == 0, "\(result.stderr)")
        let unit = result.stdout
        let lines = unit.split(separator: "\n").map(String.init)
        let sections = lines.filter { $0.hasPrefix("[") }
        #expect(sections == ["[Unit]", "[Service]", "[Install]"])
        func values(_ key: String) -> [String] { lines.filter { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } }
        #expect(values("LimitNOFILE").count == 1 && Int(values("LimitNOFILE")[0])! >= 65536)
        #expect(values("NoNewPrivileges") == ["yes"] && values("ProtectSystem") == ["strict"])
        #expect(values("ExecReload").isEmpty, "reloads are automatic")
        #expect(values("WantedBy") == ["multi-user.target"])
        #expect(values("AmbientCapabilities") == ["CAP_NET_BIND_SERVICE"], "port 443 needs it")
        let writable = Set(Self.words(try #require(values("ReadWritePaths").first)))
        #expect(writable == [tree.path + "/state", tree.path + "/catalog", tree.path + "/content"])
        #expect(values("PrivateTmp").isEmpty, "the directories are under /tmp here, which PrivateTmp would hide")

        // ExecStart is the depot binary, `serve`, and options that parse back into the same configuration.
        let exec = Self.words(try #require(values("ExecStart").first))
        #expect(exec[0].hasPrefix("/") && FileManager.default.isExecutableFile(atPath: exec[0]))
        #expect(exec[1] == "serve")
        var environment: [String: String] = [:]
        for assignment in values("Environment").flatMap(Self.words) {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            environment[parts[0]] = parts[1]
        }
        #expect(environment == ["DEPOT_ADMIN_TOKEN": "admin token with spaces % and $"])
        #expect(!exec.contains { $0.contains("admin token") })
        let parsed = try DepotConfiguration.parse(Array(exec.dropFirst(2)), environment: environment)
        let given = try DepotConfiguration.parse(Array(arguments.dropFirst(4)), environment: [:])
        #expect(parsed.host == "0.0.0.0" && parsed.port == 443 && parsed.adminToken == given.adminToken)
        #expect(parsed.dataDirectory == tree.path + "/state" && parsed.catalogDirectory == tree.path + "/catalog")
        #expect(parsed.trustedProxies == given.trustedProxies && parsed.logFormat == .json && parsed.opsListen == given.opsListen)
        #expect(parsed.catalogMaxAge == 60)
        #expect(parsed.changedSettings.map(\.declaration.name).sorted()
            == ["admin-token", "catalog", "catalog-max-age", "content", "data", "host", "log-format", "ops-listen", "port", "trusted-proxies"])

        // systemd itself accepts the unit.
        let path = tree.path + "/depot.service"
        try Data(unit.utf8).write(to: URL(fileURLWithPath: path))
        let verified = try await ChildProcess.run(try await Self.systemdAnalyze(), ["verify", path])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test func aPlainDeploymentHasNoCapabilitiesAndAPrivateTmp() async throws {
        let unit = SystemdUnit(executable: "/usr/local/bin/depot", user: "depot",
                               configuration: try DepotConfiguration.parse(["--data", "/var/lib/depot", "--catalog", "/srv/depot/catalog",
                                                                            "--content", "/srv/depot/content"], environment: [:]),
                               workingDirectory: "/").render()
        #expect(unit.contains("\nExecStart=/usr/local/bin/depot serve --catalog /srv/depot/catalog --content /srv/depot/content --data /var/lib/depot\n"))
        #expect(unit.contains("\nCapabilityBoundingSet=\n") && !unit.contains("AmbientCapabilities"))
        #expect(unit.contains("\nPrivateTmp=yes\n") && unit.contains("\nProtectHome=yes\n") && unit.contains("\nUser=depot\n"))
        #expect(SystemdUnit.quoted("plain/path-1.2") == "plain/path-1.2")
        #expect(SystemdUnit.quoted("a \"b\" \\ c%d$e") == "\"a \\\"b\\\" \\\\ c%%d$$e\"")
    }
}
