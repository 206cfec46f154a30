import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// inotify events on some directories since `init`, for tests that count what the client does to files (opens,
/// names created). Each watched directory has a label; events come as `(label, mask, name)`.
final class InotifyEvents {
    private let descriptor: Int32
    private var labels: [Int32: String] = [:]

    /// Watches each directory of `directories` (label → path) for the events of `mask` (`IN_OPEN`, `IN_CREATE`, …).
    init(watching directories: [String: String], mask: Int32) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        for (label, path) in directories {
            let watch = inotify_add_watch(descriptor, path, UInt32(mask))
            guard watch >= 0 else {
                let error = POSIXError(.init(rawValue: errno) ?? .EIO)
                Glibc.close(descriptor)
                throw error
            }
            labels[watch] = label
        }
    }

    /// The events queued since the last call, of entries with a name (each event is a 16-byte header — watch, mask,
    /// cookie, name length — and a NUL-padded name of that length).
    func drain() -> [(label: String, mask: UInt32, name: String)] {
        var events: [(label: String, mask: UInt32, name: String)] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { return events }
            var offset = 0
            while offset + 16 <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    (raw.loadUnaligned(fromByteOffset: offset, as: Int32.self), raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let name = buffer[offset + 16..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if !name.isEmpty, let label = labels[watch] {
                    events.append((label, mask, String(decoding: name, as: UTF8.self)))
                }
                offset += 16 + length
            }
        }
    }

    func close() { Glibc.close(descriptor) }
}
