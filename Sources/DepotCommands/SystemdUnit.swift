import ArgumentParsing
package import DepotServer
import Foundation

/// The systemd unit of `depot deploy systemd` (operations.md §5): `depot serve` with the given settings, the
/// descriptor limit it needs, and a hardened sandbox that may write only the data, catalog and content
/// directories. Catalog and content changes are picked up by the server itself, so there is no `ExecReload=`;
/// `SIGTERM` finishes the requests in flight (up to 10 s) before the process exits.
package struct SystemdUnit {
    /// The installed `depot` binary (absolute).
    let executable: String
    /// The account the service runs as.
    let user: String
    let configuration: DepotConfiguration
    /// The directory relative paths are resolved against.
    let workingDirectory: String

    /// A unit running `executable` as `user` with `configuration`, relative paths taken from `workingDirectory`.
    package init(executable: String, user: String, configuration: DepotConfiguration, workingDirectory: String) {
        self.executable = executable
        self.user = user
        self.configuration = configuration
        self.workingDirectory = workingDirectory
    }

    /// Settings that are secrets: they go into `Environment=` lines, never into the command line (which any
    /// local user can read in the process list).
    static let secretSettings: Set<String> = ["admin-token", "token-secret", "apple-shared-secret", "edge-secret", "ledger"]

    /// The unit file's text.
    package func render() -> String {
        let paths = [configuration.dataDirectory, configuration.catalogDirectory, configuration.contentDirectory].map(absolute)
        var arguments = [executable, "serve"]
        var environment: [String] = []
        // The directories always, as absolute paths (a service has no meaningful current directory).
        arguments += ["--catalog", paths[1], "--content", paths[2], "--data", paths[0]]
        for setting in configuration.changedSettings where !["catalog", "content", "data"].contains(setting.declaration.name) {
            if Self.secretSettings.contains(setting.declaration.name), let variable = setting.declaration.environmentName {
                environment.append(variable + "=" + setting.text)
            } else {
                arguments += [setting.declaration.flag, setting.text]
            }
        }
        let privilegedPort = configuration.port < 1024 || (configuration.opsListen.map { $0.port < 1024 } ?? false)
        let underTemporary = paths.contains { $0.hasPrefix("/tmp/") || $0.hasPrefix("/var/tmp/") }
        let underHome = paths.contains { $0.hasPrefix("/home/") || $0.hasPrefix("/root/") || $0.hasPrefix("/run/user/") }

        var lines = [
            "# Depot as a systemd service, written by `depot deploy systemd`.",
            "# Install: save as /etc/systemd/system/depot.service, create the account",
            "# (useradd --system --home-dir \(paths[0]) \(user)), give it the three directories below,",
            "# then: systemctl daemon-reload && systemctl enable --now depot",
            "# Every option may also be set as its DEPOT_* variable in an Environment= line.",
            "",
            "[Unit]",
            "Description=Depot: product lists, purchases and content packs",
            "Wants=network-online.target",
            "After=network-online.target",
            "",
            "[Service]",
            "Type=simple",
            "User=\(user)",
            "Group=\(user)",
            "ExecStart=" + arguments.map(Self.quoted).joined(separator: " "),
        ]
        if !environment.isEmpty {
            lines.append("# Secrets: keep this file readable by root only (chmod 600), or move these lines to an EnvironmentFile=.")
            lines += environment.map { "Environment=" + Self.quoted($0) }
        }
        lines += [
            "WorkingDirectory=\(Self.quoted(paths[0]))",
            "# No ExecReload=: catalog and content changes are served within 2 s on their own.",
            "# SIGTERM stops accepting and lets in-flight requests finish (up to 10 s).",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=20",
            "Restart=on-failure",
            "RestartSec=2",
            "# One descriptor per connection and per open pack file.",
            "LimitNOFILE=65536",
            "NoNewPrivileges=yes",
            "ProtectSystem=strict",
            "ReadWritePaths=" + Array(NSOrderedSet(array: paths)).compactMap { $0 as? String }.map(Self.quoted).joined(separator: " "),
            "ProtectHome=" + (underHome ? "read-only" : "yes"),
        ]
        if !underTemporary { lines.append("PrivateTmp=yes") }
        lines += [
            "PrivateDevices=yes",
            "ProtectKernelTunables=yes",
            "ProtectKernelModules=yes",
            "ProtectKernelLogs=yes",
            "ProtectControlGroups=yes",
            "ProtectClock=yes",
            "ProtectHostname=yes",
            "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "RestrictNamespaces=yes",
            "RestrictRealtime=yes",
            "RestrictSUIDSGID=yes",
            "LockPersonality=yes",
            "SystemCallArchitectures=native",
            "UMask=0027",
        ]
        if privilegedPort {
            lines += ["AmbientCapabilities=CAP_NET_BIND_SERVICE", "CapabilityBoundingSet=CAP_NET_BIND_SERVICE"]
        } else {
            lines.append("CapabilityBoundingSet=")
        }
        lines += ["", "[Install]", "WantedBy=multi-user.target", ""]
        return lines.joined(separator: "\n")
    }

    private func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : workingDirectory + "/" + path
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }

    /// A word of `ExecStart=` (or an `Environment=` assignment): bare when it is plain, else in double quotes with
    /// `\` and `"` escaped; `%` (specifiers) and `$` (variables) are doubled either way.
    package static func quoted(_ word: String) -> String {
        let escaped = word.replacingOccurrences(of: "%", with: "%%").replacingOccurrences(of: "$", with: "$$")
        let plain = !escaped.isEmpty && escaped.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) && $0.isASCII || "._/:,=@+-%$[]".unicodeScalars.contains($0)
        }
        if plain { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// `depot deploy systemd`: prints the unit on stdout.
struct DeploySystemdCommand: Command {
    static let name = "systemd"
    static let synopsis: String? = "[--user NAME] [--executable PATH] [serve options...]"
    static let summary = "Print a systemd unit that runs depot serve with these options."

    @Option("user", .nonEmptyText, help: "the account the service runs as", valueName: "NAME")
    var user = "depot"
    @Option("executable", help: "the installed depot binary", valueName: "PATH", defaultText: "this depot")
    var executable: String?
    @OptionGroup var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        let working = FileManager.default.currentDirectoryPath
        let binary = executable.map { $0.hasPrefix("/") ? $0 : working + "/" + $0 }
            ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        say(SystemdUnit(executable: binary, user: user, configuration: configuration, workingDirectory: working).render(), terminator: "")
        return 0
    }
}
