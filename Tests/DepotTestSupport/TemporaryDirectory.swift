public import Foundation

/// A directory under the system temporary directory, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(_ prefix: String = "depot-test") {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/\(prefix)-\(UUID().uuidString.prefix(12))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func url(_ relative: String = "") -> URL {
        URL(fileURLWithPath: relative.isEmpty ? path : path + "/" + relative)
    }

    /// Writes a file (creating parent directories).
    public func write(_ relative: String, _ bytes: [UInt8]) {
        let url = self.url(relative)
        try! FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try! Data(bytes).write(to: url)
    }

    public func write(_ relative: String, _ text: String) { write(relative, Array(text.utf8)) }

    public func read(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path + "/" + relative).map { [UInt8]($0) }
    }
}
