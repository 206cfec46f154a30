import Foundation
import HTTP
import Server
import Synchronization
import Testing

/// The engine tells the application how many body bytes of an answer were actually written, also when the
/// connection ends half-way (a client that disconnects, a write that stalls), and hands back the answer's tag.
@Suite("Connection state machine: bytes actually written")
struct InterruptedExchangeTests {
    final class Observer: ServerObserver {
        let completed = Mutex<[ExchangeRecord]>([])
        let interrupted = Mutex<[ExchangeRecord]>([])
        func exchangeCompleted(_ record: ExchangeRecord) { completed.withLock { $0.append(record) } }
        func exchangeInterrupted(_ record: ExchangeRecord) { interrupted.withLock { $0.append(record) } }
    }

    struct FileResponder: Responder {
        let region: FileRegion
        func handle(_ head: RequestHead, context: RequestContext) -> Handling {
            var response = Response(status: 200, body: .segments([.bytes(Array("prefix".utf8)), .file(region)]), route: "file")
            response.tag = "tag of \(head.target)"
            return .reply(.response(response))
        }
    }

    static let size = 100_000

    static func environment(_ observer: Observer) throws -> ConnectionEnvironment {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("interrupted-\(UUID().uuidString)").path
        try #require(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: size)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try #require(OpenFile.open(path: path))
        let configuration = MachineHarness.configuration(write: 2000)
        return ConnectionEnvironment(configuration: configuration, responder: FileResponder(region: FileRegion(file: file, offset: 0, length: Int64(size))),
                                     observer: observer, budget: BodyBudget(capacity: configuration.bodyBudgetBytes), loopIndex: 0,
                                     dateLine: ConnectionEnvironment.dateLine(forSecond: 1_800_000_000))
    }

    @Test("a completed answer reports its whole body and its tag")
    func completed() throws {
        let observer = Observer()
        var connection = MachineHarness(environment: try Self.environment(observer))
        connection.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        let records = observer.completed.withLock { $0 }
        #expect(records.count == 1)
        #expect(records.first?.bytesSent == Int64(Self.size + 6))
        #expect(records.first?.tag as? String == "tag of /a")
        #expect(observer.interrupted.withLock { $0 }.isEmpty)
    }

    @Test("a write that stalls half-way reports the bytes the socket took, and nothing for the answers behind it")
    func stalled() throws {
        let observer = Observer()
        var connection = MachineHarness(environment: try Self.environment(observer))
        connection.output.capacity = 40_000
        connection.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(observer.completed.withLock { $0 }.isEmpty)
        connection.advance(to: 1_000)
        connection.drain(10_000)
        connection.advance(to: 4_000)
        #expect(connection.closed)
        let records = observer.interrupted.withLock { $0 }
        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.tag as? String == "tag of /a")
        #expect(record.bytesSent == Int64(connection.output.fileBytes + 6))
        #expect(record.bytesSent > 40_000 - 400 && record.bytesSent < 50_000)
        #expect(observer.completed.withLock { $0 }.isEmpty)
    }

    @Test("a client that goes away before the body reports no body bytes")
    func goneBeforeTheBody() throws {
        let observer = Observer()
        var connection = MachineHarness(environment: try Self.environment(observer))
        connection.output.capacity = 20
        connection.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        connection.advance(to: 3_000)
        #expect(connection.closed)
        #expect(observer.interrupted.withLock { $0 }.map(\.bytesSent) == [0])
    }
}
