// swift-tools-version:6.0
// libFuzzer targets for Depot's parsers, in a package of their own so that the root's `swift build` and
// `swift test` are unaffected. Build and run them all with `Tests/Fuzz/run.sh [seconds]`.
import PackageDescription

let depot = "Depot"

let package = Package(
    name: "DepotFuzz",
    dependencies: [.package(name: depot, path: "../..")],
    targets: [
        .target(name: "CFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzer"]),
        .executableTarget(name: "FuzzRequestHead", dependencies: ["FuzzSupport", .product(name: "HTTP", package: depot)]),
        .executableTarget(name: "FuzzChunkedDecoder", dependencies: ["FuzzSupport", .product(name: "HTTP", package: depot)]),
        .executableTarget(name: "FuzzRangesAndConditions", dependencies: ["FuzzSupport", .product(name: "HTTP", package: depot)]),
        .executableTarget(name: "FuzzSignedData", dependencies: [
            "FuzzSupport", .product(name: "AppStore", package: depot), .product(name: "DepotCrypto", package: depot),
        ]),
        .executableTarget(name: "FuzzReceiptJSON", dependencies: ["FuzzSupport", .product(name: "DepotCore", package: depot)]),
    ],
    swiftLanguageModes: [.v6]
)
