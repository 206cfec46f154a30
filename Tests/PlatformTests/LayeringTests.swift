import Foundation
import Testing

/// The import rules SwiftPM cannot enforce (a module can import what its dependencies depend on): each C
/// module is imported only by the modules that own it, production code reads no environment variable
/// except where `depot` hands its environment to the option parser, and tests reach a module's internals
/// through its `package` declarations, not `@testable import`.
@Suite struct LayeringTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources").path

    /// C module → the targets that may import it (each behind a Swift face).
    static let owners: [String: Set<String>] = [
        "CLinux": ["Server", "Platform"],
        "COpenSSL": ["DepotCrypto"],
        "CSQLite": ["Ledger"],
        "CPostgres": ["Ledger"],
        "CZlib": ["DepotServer"],
    ]

    /// The test targets' directory.
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path

    /// Every Swift file under Sources, as (target, path relative to Sources, text).
    static func swiftFiles() -> [(target: String, path: String, text: String)] {
        swiftFiles(under: sources)
    }

    /// Every Swift file under a directory (build directories left out), as (first path component, path
    /// relative to the directory, text).
    static func swiftFiles(under directory: String) -> [(target: String, path: String, text: String)] {
        var files: [(String, String, String)] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasSuffix(".build") { enumerator?.skipDescendants() }
            guard relative.hasSuffix(".swift"), let text = try? String(contentsOfFile: directory + "/" + relative, encoding: .utf8) else { continue }
            files.append((String(relative.prefix { $0 != "/" }), relative, text))
        }
        return files
    }

    static func importedModules(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").map(String.init)
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                  words[..<index].allSatisfy({ ["public", "package", "internal", "@_implementationOnly", "@preconcurrency"].contains($0) })
            else { return nil }
            return words[index + 1]
        }
    }

    @Test func everySystemLibraryHasItsOwners() throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.sources)
            .filter { FileManager.default.fileExists(atPath: Self.sources + "/" + $0 + "/module.modulemap") }
        #expect(modules.contains("CLinux"))
        for module in modules {
            #expect(Self.owners[module] != nil, "\(module) has no owner in this table: who may import it?")
        }
    }

    @Test func cModulesAreImportedOnlyByTheirOwners() {
        let files = Self.swiftFiles()
        #expect(files.count > 100)
        for file in files {
            for module in Self.importedModules(file.text) {
                guard let owners = Self.owners[module] else { continue }
                #expect(owners.contains(file.target), "\(file.path) imports \(module), which only \(owners.sorted()) may import")
            }
        }
    }

    @Test func productionCodeReadsNoEnvironmentVariable() {
        for file in Self.swiftFiles() where file.path != "depot/DepotMain.swift" {
            for marker in ["processInfo.environment", "getenv(", "environ["] {
                #expect(!file.text.contains(marker), "\(file.path) reads the environment (\(marker)); take a parameter instead")
            }
        }
    }

    /// The modules a file imports with `@testable`.
    static func testableImports(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").map(String.init)
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count, words[..<index].contains("@testable"),
                  words[..<index].allSatisfy({ ["@testable", "@preconcurrency", "public", "package", "internal"].contains($0) })
            else { return nil }
            return words[index + 1]
        }
    }

    /// Every module's tests import it plainly (what they check is `package`): `@testable import` must not come back.
    @Test func noTestImportsAModuleTestable() {
        #expect(Self.testableImports("import Foundation\n@testable import Ledger\n// `@testable import X` in a comment\n") == ["Ledger"])
        let files = Self.swiftFiles(under: Self.tests)
        #expect(files.count > 100)
        for file in files {
            for module in Self.testableImports(file.text) {
                Issue.record("Tests/\(file.path) has @testable import \(module): make what it checks package and import \(module) plainly")
            }
        }
    }
}
