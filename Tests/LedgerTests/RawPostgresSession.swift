import Dispatch
import Foundation
import Ledger

/// A test's own PostgreSQL session beside the ledgers (to hold a transaction open, write behind the
/// ledger's back, or end other sessions), on its own queue like the ledger's connections.
final class RawPostgresSession: @unchecked Sendable { // @unchecked: `connection` is used only on `queue`.
    private let queue = DispatchQueue(label: "ledger-tests.raw-session")
    private let connection: PostgresConnection

    init(_ target: LedgerFixture.Target) async throws {
        guard case .postgres(let location) = target.location else { throw PostgresError(message: "not a PostgreSQL target") }
        let queue = queue
        connection = try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    continuation.resume(returning: try PostgresConnection(parameters: location.connectionParameters(application: "ledger-tests")))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    deinit { connection.close() }

    /// Runs a statement and returns its rows.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) async throws -> [[String?]] {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    continuation.resume(returning: try self.connection.query(sql, parameters).rows)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Runs statements without parameters (`BEGIN`, `COMMIT`, several at once).
    func execute(_ sql: String) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                do {
                    try self.connection.execute(sql)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// The notifications this session has received so far (after a `LISTEN`).
    func notifications() async throws -> [PostgresNotification] {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    continuation.resume(returning: try self.connection.notifications())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// The server process IDs of this database's sessions named `application`.
    func backendPIDs(application: String) async throws -> Set<Int32> {
        Set(try await query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
                            [.text(application)]).compactMap { $0[0].flatMap { Int32($0) } })
    }

    /// Ends the sessions of this database whose application name is `application`; returns how many.
    @discardableResult
    func terminate(application: String) async throws -> Int {
        try await query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()
            """, [.text(application)]).count
    }
}
