public import Foundation

/// Tells how many bytes can still be written on the volume of a destination. Injectable so an app (or a
/// test) decides what "free" means.
public protocol FreeSpaceSource: Sendable {
    /// Bytes available for new data on the volume holding `url` (which may not exist yet).
    func availableBytes(for url: URL) throws -> Int64
}

/// The volume's free space: `volumeAvailableCapacityForImportantUsage` where the platform has it (iOS,
/// macOS: counts purgeable space the system would free for a user-requested download), otherwise
/// `FileManager.attributesOfFileSystem(forPath:)[.systemFreeSize]` (Linux).
public struct VolumeFreeSpace: FreeSpaceSource {
    public init() {}

    public func availableBytes(for url: URL) throws -> Int64 {
        let existing = Self.nearestExisting(url)
        #if os(iOS) || os(macOS) || os(tvOS) || os(watchOS) || os(visionOS)
        let values = try existing.resourceValues(forKeys: [.volumeAvailableCapacityForImportantUsageKey])
        if let capacity = values.volumeAvailableCapacityForImportantUsage { return capacity }
        #endif
        let attributes = try FileManager.default.attributesOfFileSystem(forPath: existing.path)
        switch attributes[.systemFreeSize] {
        case let number as NSNumber: return number.int64Value
        case let number as Int64: return number
        case let number as Int: return Int64(number)
        case let number as UInt64: return Int64(clamping: number)
        default: return 0
        }
    }

    /// `url` or its closest existing ancestor.
    static func nearestExisting(_ url: URL) -> URL {
        var current = url.standardizedFileURL
        while !FileManager.default.fileExists(atPath: current.path), current.pathComponents.count > 1 {
            current = current.deletingLastPathComponent()
        }
        return current
    }
}

/// A ``FreeSpaceSource`` from a closure.
public struct FreeSpaceReader: FreeSpaceSource {
    private let read: @Sendable (URL) throws -> Int64

    public init(_ read: @escaping @Sendable (URL) throws -> Int64) { self.read = read }

    public func availableBytes(for url: URL) throws -> Int64 { try read(url) }
}

/// The space a download leaves free on the device, as the server's plan does (spec §4.4):
/// `max(minimumBytes, floor(fraction × available))`.
public struct SpaceReserve: Sendable, Equatable {
    public var minimumBytes: Int64
    public var fraction: Double

    public init(minimumBytes: Int64, fraction: Double) {
        self.minimumBytes = minimumBytes
        self.fraction = fraction
    }

    /// 16 MiB or 2 % of the free space, whichever is larger.
    public static let standard = SpaceReserve(minimumBytes: 16 << 20, fraction: 0.02)
    /// Nothing kept free.
    public static let none = SpaceReserve(minimumBytes: 0, fraction: 0)

    /// The reserve when `available` bytes are free.
    public func bytes(forAvailable available: Int64) -> Int64 {
        max(minimumBytes, Int64((Double(max(0, available)) * fraction).rounded(.down)))
    }
}
