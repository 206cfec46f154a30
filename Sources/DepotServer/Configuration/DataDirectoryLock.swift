import ArgumentParsing
import Foundation
import Glibc
import Synchronization

/// One `depot serve` per SQLite data directory: an exclusive `flock` on `<data>/depot.lock`, held while the server
/// runs. Two servers on one `ledger.sqlite` would each trust their own in-memory view of revocations (a refund
/// taken by one would not reach the other), so the second is refused at start; several instances share a
/// PostgreSQL ledger instead. The kernel releases the lock when the process dies, so a crash never leaves it held.
final class DataDirectoryLock: Sendable {
    private let descriptor: Int32
    private let released = Atomic<Bool>(false)

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Takes the lock, or throws a ``ConfigurationError`` naming `--data` (with the holder's PID when known).
    static func acquire(dataDirectory: String) throws -> DataDirectoryLock {
        let path = dataDirectory + "/depot.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ConfigurationError(option: "data", "cannot open \(path): \(systemMessage(errno))") }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(fd)
            guard code == EWOULDBLOCK else { throw ConfigurationError(option: "data", "cannot lock \(path): \(systemMessage(code))") }
            let who = Int(holder).map { "another depot serve (pid \($0))" } ?? "another depot serve"
            throw ConfigurationError(option: "data", "\(dataDirectory) is in use by \(who): one SQLite ledger serves one instance; "
                + "run several instances on a shared PostgreSQL ledger (--ledger postgres://...)")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DataDirectoryLock(descriptor: fd)
    }

    /// Gives the lock up (the server stopped).
    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = ftruncate(descriptor, 0)
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
