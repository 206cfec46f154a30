import Foundation

/// Exchanges two directories in one atomic step where the system offers it: `renameat2(RENAME_EXCHANGE)` on
/// Linux (found at run time, so the library needs no C module), `renamex_np(RENAME_SWAP)` on Apple platforms.
enum DirectorySwap {
    /// True when `a` and `b` were exchanged; false when the system cannot do it (the caller renames instead).
    static func exchange(_ a: URL, _ b: URL) -> Bool {
        #if canImport(Darwin)
        return renamex_np(a.path, b.path, UInt32(RENAME_SWAP)) == 0
        #elseif os(Linux)
        guard let function = renameat2 else { return false }
        // AT_FDCWD is -100; RENAME_EXCHANGE is 1 << 1 (linux/fs.h).
        return function(-100, a.path, -100, b.path, 1 << 1) == 0
        #else
        return false
        #endif
    }

    #if os(Linux)
    private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32

    /// glibc's `renameat2` (2.28 and later), resolved once.
    private static let renameat2: RenameAt2? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: RenameAt2.self)
    }()
    #endif
}
