import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A command-line tool a test runs (openssl, curl): its path, installed with `apt-get` from its Debian package
/// when it is missing and the tests run as root (as `.ci/run` does), an error otherwise.
public enum DebianPackage {
    /// `/usr/bin/NAME`, installing `package` first when it is missing.
    public static func tool(_ name: String, package: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try install(name, package: package) })
            }.start()
        }
    }

    private static func install(_ name: String, package: String) throws -> String {
        let path = "/usr/bin/" + name
        if FileManager.default.isExecutableFile(atPath: path) { return path }
        guard getuid() == 0 else { throw Failure(description: "\(name) is not installed (apt-get install \(package))") }
        let result = try SpawnedProcess.run("/bin/sh", ["-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \(package)"])
        guard result.status == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure(description: "installing \(package) failed: \(result.output)")
        }
        return path
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
