import DepotServer
import DepotTestSupport
import DepotWire
import Foundation
import Ledger
import Synchronization
import Testing

/// The database's publish lock held by a session of its own (as another host's publish holds it) until
/// `release()`.
final class OutsidePublishLock: Sendable {
    private let acquired = AsyncStream<Void>.makeStream()
    private let released = AsyncStream<Void>.makeStream()
    private let holder: Task<Void, any Error>

    init(_ location: LedgerLocation) {
        let (acquired, released) = (acquired, released)
        holder = Task {
            defer { acquired.continuation.finish() }
            try await SharedPublishLock(location: location).holding {
                acquired.continuation.yield()
                for await _ in released.stream { break }
            }
        }
    }

    /// Whether the lock was granted (false: taking it failed).
    func waitUntilHeld() async -> Bool {
        for await _ in acquired.stream { return true }
        return false
    }

    func release() async throws {
        released.continuation.yield()
        try await holder.value
    }
}

/// Whether a request has been answered, set from the task that sends it.
final class AnsweredFlag: Sendable {
    private let state = Mutex(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

/// A product edit and the discarding of an upload change `catalog/` and `content/` like a publish, so they take the
/// same locks (scale-out §4): with PostgreSQL the database's publish lock, which holds across hosts whatever the
/// shared file system does with `flock`, and the file lock `content/.staging/.lock`. While another session holds
/// the database's, the change waits (the server's session is seen waiting in `pg_locks`), and it completes as
/// before once the lock is released.
@Suite("Publishing: product edits and discarded uploads take the publish locks")
struct AdminPublishLockTests {
    static let product = "com.example.depot.level2"
    static let editedTitle = "Level Two, edited under the lock"

    enum Change: String, CaseIterable, CustomTestStringConvertible {
        case edit
        case discard
        var testDescription: String { rawValue }
    }

    /// Uploads what `change` needs (a file for the discard).
    static func prepare(_ change: Change, on depot: TestDepot) async throws {
        guard change == .discard else { return }
        let upload = "PUT \(WirePath.adminPackFile(pack: "level7", version: 1, path: "a.bin")) HTTP/1.1\r\nHost: x\r\n"
            + "Authorization: Bearer \(AdminVerbTests.token)\r\nContent-Length: 5\r\n\r\nhello"
        let response = try await OffPool.run { try depot.request(upload) }
        #expect(response.status == 201, "\(response.text)")
    }

    /// Sends `change`'s request in a task of its own; `answered` is set when its answer arrived.
    static func send(_ change: Change, to depot: TestDepot, answered: AnsweredFlag) -> Task<RawResponse, any Error> {
        Task {
            defer { answered.set() }
            switch change {
            case .edit:
                return try await AdminVerbTests.send(depot, "PATCH", "/admin/v1/products/\(product)", body: "{\"title\": \"\(editedTitle)\"}")
            case .discard:
                return try await AdminVerbTests.send(depot, "DELETE", WirePath.adminUpload(pack: "level7", version: 1))
            }
        }
    }

    /// Whether `change` has changed nothing on disk yet.
    static func unchanged(_ change: Change, on depot: TestDepot) throws -> Bool {
        switch change {
        case .edit: return try !String(contentsOfFile: depot.catalogDirectory + "/products.json", encoding: .utf8).contains(editedTitle)
        case .discard: return FileManager.default.fileExists(atPath: depot.contentDirectory + "/.staging/uploads/level7/1/a.bin")
        }
    }

    /// `change`'s answer and its effect, the same as without a lock held.
    static func checkDone(_ change: Change, _ response: RawResponse, on depot: TestDepot) async throws {
        switch change {
        case .edit:
            #expect(response.status == 200, "\(response.text)")
            #expect(try AdminVerbTests.object(response)["title"] as? String == editedTitle)
            #expect(try await AdminVerbTests.send(depot, "GET", "/admin/v1/products").text.contains(editedTitle))
        case .discard:
            #expect(response.status == 204, "\(response.text)")
            #expect(!FileManager.default.fileExists(atPath: depot.contentDirectory + "/.staging/uploads/level7/1"))
        }
    }

    @Test(arguments: Change.allCases)
    func waitsForTheDatabaseLockHeldByAnotherSession(_ change: Change) async throws {
        let postgres = try await PostgresCluster.shared()
        let database = try await postgres.createDatabase()
        let location = try LedgerLocation(parsing: postgres.uri(database: database))
        let depot = try await TestDepot.start {
            $0.adminToken = AdminVerbTests.token
            $0.ledger = location
            $0.ledgerPool = 2
        }
        do {
            try await Self.prepare(change, on: depot)
            let outside = OutsidePublishLock(location)
            try #require(await outside.waitUntilHeld(), "the test's session takes the publish lock")
            let answered = AnsweredFlag()
            let request = Self.send(change, to: depot, answered: answered)
            // Until the server's session is seen waiting for the lock, or the change is answered (without the lock).
            var waiting = false
            _ = try await eventually(within: 60) {
                waiting = try await postgres.sql("""
                    SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """, database: database) != "0"
                return waiting || answered.isSet
            }
            #expect(!answered.isSet, "\(change) was answered while another session held the publish lock")
            #expect(waiting, "the server's session waits for the publish lock")
            #expect(try Self.unchanged(change, on: depot), "nothing changed while the lock was held")
            try await outside.release()
            try await Self.checkDone(change, try await request.value, on: depot)
        } catch {
            await depot.stop()
            try? await postgres.dropDatabase(database)
            throw error
        }
        await depot.stop()
        try? await postgres.dropDatabase(database)
    }
}
