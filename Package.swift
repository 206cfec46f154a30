// swift-tools-version:6.0
import PackageDescription

/// Linker flags of the release `depot` on Linux: the Swift runtime and Foundation linked in statically (the
/// binary needs no Swift toolchain on the host and keeps about 6 MB less resident: README, Decisions), without
/// exporting every symbol of the binary (`-static-stdlib` asks for `-export-dynamic`). The other modules are
/// compiled against the shared Foundation, whose objects name fewer libraries than the static one needs: the
/// rest are listed here, in link order. `Sources/depot/Link` holds a one-line linker script that lets `-lcurl`
/// find Debian's runtime `libcurl.so.4`, the library the shared FoundationNetworking loads too.
let staticReleaseLink = [
    "-static-stdlib", "-Xlinker", "--no-export-dynamic", "-L", Context.packageDirectory + "/Sources/depot/Link",
    "-l_CFURLSessionInterface", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections",
    "-lswiftSynchronization", "-lcurl",
]

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "depot", targets: ["depot"]),
        .library(name: "DepotClient", targets: ["DepotClient", "DepotWire"]),
        // What the fuzz targets (Tests/Fuzz, a package of its own) link against.
        .library(name: "HTTP", targets: ["HTTP"]),
        .library(name: "DepotCore", targets: ["DepotCore"]),
        .library(name: "DepotCrypto", targets: ["DepotCrypto"]),
        .library(name: "AppStore", targets: ["AppStore"]),
    ],
    targets: [
        // C faces: module maps and one shim header each, nothing else.
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),

        // Sans-I/O HTTP/1.1.
        .target(name: "HTTP"),
        // Linux facilities behind Swift faces: directory watching (inotify), volume space (statvfs),
        // thread priority, heap tuning. With `Server`, the only module that may import `CLinux`.
        .target(name: "Platform", dependencies: ["CLinux"]),
        // Options and commands declared once: flags, environment, `--help`, the README's table.
        .target(name: "ArgumentParsing"),
        // The epoll engine.
        .target(name: "Server", dependencies: ["HTTP", "CLinux"]),
        // The wire formats and URL paths shared by server and client (Foundation only).
        .target(name: "DepotWire"),
        // The domain, free of I/O.
        .target(name: "DepotCore", dependencies: ["DepotWire"]),
        // libcrypto's Swift face: digests, HMAC, ECDSA, X.509.
        .target(name: "DepotCrypto", dependencies: ["COpenSSL"]),
        // Apple: JWS verification and the verifyReceipt client.
        .target(name: "AppStore", dependencies: ["DepotWire", "DepotCore", "DepotCrypto"]),
        // The ledger: SQLite (embedded default) or PostgreSQL (many instances).
        .target(name: "Ledger", dependencies: ["CSQLite", "CPostgres", "Platform"]),
        // The publisher console's page, modules and style sheet, embedded in the binary at build time.
        .target(name: "DepotConsole", dependencies: ["DepotCrypto"], resources: [.embedInCode("Console")]),
        // Composition: routes, handlers, catalog/content loading, publishing, operations.
        .target(name: "DepotServer", dependencies: [
            "HTTP", "Server", "DepotWire", "DepotCore", "DepotCrypto", "AppStore", "Ledger", "CZlib", "Platform", "ArgumentParsing",
            "DepotConsole",
        ]),
        // A simulated App Store for tests and `depot demo`.
        .target(name: "AppStoreSimulator", dependencies: ["HTTP", "Server", "DepotCrypto", "DepotWire"]),
        // The client library (Foundation only; builds for iOS/macOS too).
        .target(name: "DepotClient", dependencies: ["DepotWire"]),
        // The commands of `depot` (a library, so the test publisher can run `publish` with injected hooks).
        .target(name: "DepotCommands", dependencies: [
            "ArgumentParsing", "DepotServer", "DepotClient", "DepotWire", "AppStoreSimulator", "DepotCore", "DepotCrypto", "Platform", "Ledger",
        ]),
        // The release binary carries the Swift runtime and Foundation (no toolchain needed on the host, and
        // about 6 MB less resident memory: README, Decisions); its symbols stay private to it.
        .executableTarget(name: "depot", dependencies: ["DepotCommands"], exclude: ["Link"],
                          linkerSettings: [.unsafeFlags(staticReleaseLink, .when(platforms: [.linux], configuration: .release))]),

        // Benchmark helpers (run by the scripts in Tests/Benchmarks, release build).
        .executableTarget(name: "depot-bench", dependencies: ["AppStore", "AppStoreSimulator", "DepotCore", "DepotCrypto"],
                          path: "Tests/Benchmarks/DepotBench"),

        // `depot publish` with a crash point or a fixed free space, for the crash-safety and full-disk tests
        // (the production `depot` reads no test hook).
        .executableTarget(name: "depot-test-publisher", dependencies: ["ArgumentParsing", "DepotCommands", "Platform"],
                          path: "Tests/TestPublisher"),

        // Shared by the test targets: raw sockets, temporary trees, child processes.
        .target(name: "DepotTestSupport", path: "Tests/DepotTestSupport"),

        .testTarget(name: "HTTPTests", dependencies: ["HTTP"]),
        .testTarget(name: "ArgumentParsingTests", dependencies: ["ArgumentParsing"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform", "DepotTestSupport"]),
        .testTarget(name: "ServerTests", dependencies: ["Server", "HTTP", "DepotTestSupport"]),
        .testTarget(name: "DepotWireTests", dependencies: ["DepotWire"]),
        .testTarget(name: "DepotCoreTests", dependencies: ["DepotCore", "DepotWire"], resources: [.copy("Fixtures")]),
        .testTarget(name: "DepotCryptoTests", dependencies: ["DepotCrypto"]),
        .testTarget(name: "AppStoreTests", dependencies: ["AppStore", "AppStoreSimulator", "DepotCrypto", "DepotCore", "DepotTestSupport",
                                                       "HTTP", "Server"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "LedgerTests", dependencies: ["Ledger", "DepotTestSupport", "Platform"]),
        .testTarget(name: "DepotClientTests", dependencies: ["DepotClient", "DepotWire", "DepotTestSupport"]),
        .testTarget(name: "DepotServerTests", dependencies: [
            "DepotServer", "AppStoreSimulator", "HTTP", "Server", "DepotClient", "depot", "depot-test-publisher", "DepotTestSupport",
            "DepotWire", "DepotCore", "DepotCrypto", "Ledger", "ArgumentParsing", "DepotCommands", "Platform", "DepotConsole",
        ]),
    ],
    swiftLanguageModes: [.v6]
)

// Imports are explicit and existentials spelled out, on every Swift target.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("ExistentialAny"),
    ]
}
