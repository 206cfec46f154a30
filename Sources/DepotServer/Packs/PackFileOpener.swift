import Glibc
package import Server
import Synchronization

/// How a pack file is checked and opened the first time a loop serves it (spec §4.4, path safety). It touches
/// the disk (an `lstat` per path component, then `open`), which can take as long as the disk wants (NFS, a
/// spun-down volume), so ``PackRoutes`` runs it on a queue of the loop's own, never on the event loop; a test's
/// holds it to see that.
package struct PackFileOpener: Sendable {
    /// The file `relative` under the version directory `directory`, checked and open, or why it cannot be
    /// served; `size` is what the manifest records.
    package var open: @Sendable (_ directory: String, _ relative: String, _ size: Int64) -> Result<OpenFile, PackFailure>

    package init(open: @escaping @Sendable (_ directory: String, _ relative: String, _ size: Int64) -> Result<OpenFile, PackFailure>) {
        self.open = open
    }

    /// No component may be a symlink, and the file opened must be the one checked (a directory swapped for a
    /// symlink between the check and the open is caught by the identity comparison); out of descriptors is
    /// `cannotOpenMoreFiles`, a size other than the manifest's `contentCorrupt`.
    package static let system = PackFileOpener { directory, relative, size in
        guard let checked = FileStatus.containedRegularFile(base: directory, relative: relative) else {
            return .failure(.fileMissingOnDisk)
        }
        guard let opened = OpenFile.open(path: directory + "/" + relative) else {
            let code = errno
            return .failure(code == EMFILE || code == ENFILE ? .cannotOpenMoreFiles : .fileMissingOnDisk)
        }
        guard FileIdentity(device: opened.identity.device, inode: opened.identity.inode) == checked else { return .failure(.fileMissingOnDisk) }
        guard opened.size == size else { return .failure(.contentCorrupt) }
        return .success(opened)
    }
}

/// Runs a job on one of the server's event loops, on that loop's own thread (``HTTPServer/onLoop(_:_:)``): how
/// a file opened off the loop is remembered in the loop's ``PackLoopCache``, which only its loop touches. Bound
/// once the server exists (the routes are made before it); until then, and for routes used without a server,
/// nothing is run and files opened off the loop are not remembered.
final class LoopJobs: Sendable {
    typealias Runner = @Sendable (_ loop: Int, _ job: @escaping @Sendable () -> Void) -> Void
    private let runner = Mutex<Runner?>(nil)

    func bind(_ run: @escaping Runner) { runner.withLock { $0 = run } }

    func run(on loop: Int, _ job: @escaping @Sendable () -> Void) {
        runner.withLock { $0 }?(loop, job)
    }
}
