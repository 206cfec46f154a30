import DepotCore
import DepotWire
import DepotTestSupport
import Foundation
import HTTP
import Testing
import DepotServer

/// Polls `condition` every 20 ms on a dedicated thread until it holds or `seconds` pass. For deadlines the
/// server must meet (a reload within 2 s): the polling itself never waits for a cooperative thread that
/// other tests keep busy, so the time measured is the server's.
func eventuallyOnThread(within seconds: Double = 2, _ condition: @escaping @Sendable () throws -> Bool) async throws -> Bool {
    try await OffPool.run {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if try condition() { return true }
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}

/// Polls `condition` every 50 ms until it holds or `seconds` pass. Returns whether it held.
func eventually(within seconds: Double = 2, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// The two product lists by path.
enum ListPath: Sendable, CaseIterable, CustomTestStringConvertible {
    case v1
    case v2

    /// The list's path (`WirePath`).
    var rawValue: String { (self == .v1 ? WirePath.productsV1 : WirePath.productsV2).pattern }
    var testDescription: String { rawValue }
    var recordName: String { String(rawValue.dropFirst()) }
}

/// What a cache keeps of a list response.
struct ListValidators: Equatable, Sendable, CustomStringConvertible {
    var etag: String?
    var lastModified: String?

    init(_ response: RawResponse) {
        etag = response.header("ETag")
        lastModified = response.header("Last-Modified")
    }

    var description: String { "ETag \(etag ?? "-"), Last-Modified \(lastModified ?? "-")" }
}

extension RawResponse {
    /// Whether a header field is present at all.
    func has(_ name: String) -> Bool { header(name) != nil }
}

extension TestDepot {
    /// Builds a request with header lines in order (repeats allowed).
    static func rawRequest(_ method: String, _ path: String, _ headers: [(String, String)], close: Bool = false) -> String {
        var raw = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { raw += "\(name): \(value)\r\n" }
        if close { raw += "Connection: close\r\n" }
        return raw + "\r\n"
    }

    /// One request on a fresh connection, off the cooperative pool.
    func send(_ method: String = "GET", _ path: String, _ headers: [(String, String)] = []) async throws -> RawResponse {
        let port = self.port
        let raw = Self.rawRequest(method, path, headers)
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(raw)
            do {
                return try connection.readResponse(isHead: method == "HEAD")
            } catch {
                throw RawHTTPConnection.Failure(description: "\(method) \(path) on port \(port): \(error)")
            }
        }
    }

    /// Every byte the server sends for one request with `Connection: close` (to see that nothing follows a head).
    func sendUntilClose(_ method: String, _ path: String, _ headers: [(String, String)] = []) async throws -> [UInt8] {
        let port = self.port
        let raw = Self.rawRequest(method, path, headers, close: true)
        return try await OffPool.run {
            let connection = try RawHTTPConnection(port: port)
            connection.send(raw)
            let (bytes, closed) = connection.readUntilClose(timeout: 5)
            guard closed else { throw RawHTTPConnection.Failure(description: "the server did not close") }
            return bytes
        }
    }

    func validators(_ list: ListPath) async throws -> ListValidators {
        ListValidators(try await send("GET", list.rawValue))
    }

    /// The access-log lines captured so far, without their time, level and request ID
    /// (`127.0.0.1:5000 GET /products_v1.json 200 120 0.4ms`).
    var accessLines: [String] {
        logRecords.filter(\.isAccess).map(\.message)
    }

    /// The text log lines captured so far, taken apart.
    var logRecords: [LogRecord] { logs.lines.compactMap(LogRecord.init) }
}

/// A text log line taken apart (operations.md §2): `TIME LEVEL [REQUEST-ID] message`.
struct LogRecord: Sendable, CustomStringConvertible {
    let time: String
    let level: String
    let requestID: String?
    let message: String

    init?(_ line: String) {
        let pattern = /^(?<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (?<level>debug|info|warning|error)(?: \[(?<id>[!-~]+)\])? (?<message>.*)$/
        guard let match = line.wholeMatch(of: pattern) else { return nil }
        time = String(match.time)
        level = String(match.level)
        requestID = match.id.map(String.init)
        message = String(match.message)
    }

    /// An access line: `REMOTE METHOD PATH STATUS BYTES DURATIONms`.
    var isAccess: Bool {
        level == "info" && requestID != nil && message.wholeMatch(of: /\S+ [A-Z-]+ \S+ \d{3} \d+ \d+(\.\d+)?ms/) != nil
    }

    var description: String { "\(time) \(level) \(requestID.map { "[\($0)] " } ?? "")\(message)" }
}

/// Files of a test tree.
enum TreeFiles {
    /// Replaces a file atomically (temp + rename), optionally with a given modification time.
    static func replace(_ path: String, _ text: String, modified: Date? = nil) throws {
        let temporary = path + ".tmp-\(UUID().uuidString.prefix(8))"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        if let modified { try setModified(temporary, modified) }
        guard rename(temporary, path) == 0 else { throw RawHTTPConnection.Failure(description: "rename failed: errno \(errno)") }
    }

    static func setModified(_ path: String, _ date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The recorded `lastModified` (RFC 3339) of a list in `catalog/lists.json`.
    static func recordedTime(catalog: String, list: ListPath) throws -> Int64? {
        let data = try Data(contentsOf: URL(fileURLWithPath: catalog + "/lists.json"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let entry = object?[list.recordName] as? [String: Any], let text = entry["lastModified"] as? String else { return nil }
        return Timestamp.parseRFC3339(text)
    }

    /// Copies a tree with `cp -a` (mtimes kept).
    static func copy(_ from: String, to: String) throws {
        let result = try ProcessRunner.run("/bin/cp", ["-a", from, to])
        guard result.status == 0 else { throw RawHTTPConnection.Failure(description: "cp failed: \(result.stderr)") }
    }

    /// ``copy(_:to:)`` with its `cp` child waited for on a thread of its own (async callers).
    static func copy(_ from: String, to: String) async throws {
        try await OffPool.run { try copy(from, to: to) }
    }
}

/// `gzip -dc` as an independent decoder of what the server compressed.
enum Gunzip {
    static func decode(_ bytes: [UInt8]) async throws -> [UInt8] {
        try await OffPool.run {
            let result = try ProcessRunner.run("/bin/gzip", ["-dc"], input: Data(bytes))
            guard result.status == 0 else { throw RawHTTPConnection.Failure(description: "gzip -dc failed: \(result.stderr)") }
            return Array(result.stdout.utf8)
        }
    }
}

/// Catalog texts for tests.
enum SampleCatalog {
    /// The repository's `catalog/products.json`.
    static var text: String { (try? TreeFiles.text(TestDepot.repositoryRoot + "/catalog/products.json")) ?? "" }

    /// A catalog text built from product objects.
    static func catalog(_ products: [String]) -> String {
        "{\n  \"products\": [\n    " + products.joined(separator: ",\n    ") + "\n  ]\n}\n"
    }

    static func product(_ id: String, type: String = "consumable", title: String = "T", description: String = "",
                        pack: String? = nil, status: String = "live") -> String {
        var out = "{\"id\": \"\(id)\", \"type\": \"\(type)\", \"title\": \"\(title)\", \"description\": \"\(description)\", "
        if let pack { out += "\"pack\": \"\(pack)\", " }
        return out + "\"status\": \"\(status)\"}"
    }

    /// The sample catalog with one product appended.
    static func sampleAdding(_ product: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        precondition(trimmed.hasSuffix("]\n}"))
        return String(trimmed.dropLast(3)).trimmingCharacters(in: .whitespacesAndNewlines) + ",\n    " + product + "\n  ]\n}\n"
    }
}

/// Starts a server, runs `body`, and stops the server whether `body` throws or not.
func withDepot<T: Sendable>(sample: Bool = true, tree: TemporaryDirectory? = nil,
                            configure: (inout DepotConfiguration) -> Void = { _ in },
                            _ body: (TestDepot) async throws -> T) async throws -> T {
    let depot = try await TestDepot.start(sample: sample, tree: tree, configure: configure)
    do {
        let result = try await body(depot)
        await depot.stop()
        return result
    } catch {
        await depot.stop()
        throw error
    }
}
