import ArgumentParsing
import DepotCrypto
import Foundation
import Glibc

/// The HMAC key for download tokens: `--token-secret`, or `<data>/token.key` created 0600 on first run.
package enum TokenKey {
    /// Why the key could not be loaded or created.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The key bytes. A configured secret must be at least 32 characters. Without `create`, a missing
    /// `token.key` is an error instead of a new key (a key no server knows would sign tokens no server accepts).
    package static func load(secret: String?, dataDirectory: String, create: Bool = true) throws(Failure) -> [UInt8] {
        if let secret {
            guard secret.utf8.count >= 32 else {
                throw Failure(description: "--token-secret: must be at least 32 characters")
            }
            return Array(secret.utf8)
        }
        let path = dataDirectory + "/token.key"
        if let existing = try read(path) { return existing }
        guard create else {
            throw Failure(description: "no token key at \(path): give the --data directory of the server (its token.key), "
                + "or the server's --token-secret")
        }
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "--data: cannot create \(dataDirectory): \(error.localizedDescription)")
        }
        // Write a temporary file, fsync it, then link it into place: two processes starting at once agree on one key,
        // and a crash never leaves a truncated key behind.
        let key = SecureRandom.bytes(32)
        let temporary = path + ".tmp.\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "--data: cannot write \(path): \(systemMessage(errno))") }
        let text = Array((Hex.encode(key) + "\n").utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        defer { unlink(temporary) }
        guard written == text.count, synced else { throw Failure(description: "--data: cannot write \(path)") }
        if link(temporary, path) != 0 {
            if errno == EEXIST, let existing = try read(path) { return existing }
            throw Failure(description: "--data: cannot create \(path): \(systemMessage(errno))")
        }
        let directoryFD = open(dataDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 { fsync(directoryFD); close(directoryFD) }
        return key
    }

    /// `load(secret:dataDirectory:)`, its failure a configuration error naming `--token-secret` or `--data`.
    static func configured(secret: String?, dataDirectory: String) throws(ConfigurationError) -> [UInt8] {
        do {
            return try load(secret: secret, dataDirectory: dataDirectory)
        } catch {
            throw ConfigurationError(option: secret == nil ? "data" : "token-secret", error.description)
        }
    }

    private static func read(_ path: String) throws(Failure) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count == 64, let key = Hex.decode(text) else {
            throw Failure(description: "\(path): not a token key (64 hex characters expected)")
        }
        return key
    }
}
