import Glibc

/// Free and total bytes of the volume holding a path.
public protocol VolumeSpace: Sendable {
    /// Bytes an unprivileged user may still write; 0 when the path cannot be examined.
    func freeBytes(at path: String) -> Int64
    /// Size of the volume; 0 when the path cannot be examined.
    func totalBytes(at path: String) -> Int64
}

/// The real volume, through `statvfs(2)`.
public struct SystemVolumeSpace: VolumeSpace {
    /// The volumes of this machine.
    public init() {}

    public func freeBytes(at path: String) -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    public func totalBytes(at path: String) -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int64(info.f_blocks) * Int64(info.f_frsize)
    }
}

/// A volume that reports fixed figures for every path (tests and the test publisher fake a full disk).
public struct FixedVolumeSpace: VolumeSpace {
    /// Bytes reported free.
    public let free: Int64
    /// Bytes reported as the volume's size.
    public let total: Int64

    /// A volume with `free` bytes free out of `total`.
    public init(free: Int64, total: Int64 = 1 << 40) {
        self.free = free
        self.total = total
    }

    public func freeBytes(at path: String) -> Int64 { free }
    public func totalBytes(at path: String) -> Int64 { total }
}
