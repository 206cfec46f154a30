import Glibc
import CLinux

/// An open file shared by the responses that send parts of it; closed when the last one is done.
///
/// The descriptor stays inside the engine (it is what `sendfile` reads); callers see what they need to know
/// about the file: its identity, size and modification time, as they were when it was opened.
public final class OpenFile: Sendable {
    let descriptor: Int32
    /// The file's size when it was opened.
    public let size: Int64
    /// The file's modification time (seconds since 1970).
    public let modificationTime: Int64
    /// Which file this is (device and inode), to compare with a path checked before it was opened.
    public let identity: FileIdentity

    /// Opens a regular file for reading. Returns nil when it does not exist or is not a regular file (`errno`
    /// says why).
    public static func open(path: String) -> OpenFile? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            let code = errno
            close(fd)
            errno = code
            return nil
        }
        return OpenFile(descriptor: fd, size: Int64(info.st_size), modificationTime: Int64(info.st_mtim.tv_sec),
                        identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }

    init(descriptor: Int32, size: Int64, modificationTime: Int64, identity: FileIdentity) {
        self.descriptor = descriptor
        self.size = size
        self.modificationTime = modificationTime
        self.identity = identity
    }

    deinit { close(descriptor) }
}

/// Which file a path or descriptor refers to: its device and inode.
public struct FileIdentity: Equatable, Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}
