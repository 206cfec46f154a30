import Dispatch
import Foundation
import Synchronization

/// A fixed number of PostgreSQL connections (`--ledger-pool`), each with its own serial queue: every libpq
/// call runs there, never on the caller's thread nor on Swift's cooperative pool, bridged with a continuation.
///
/// - Connections open lazily and are replaced when lost; `ReconnectBackoff` keeps a server that is down from
///   costing every caller a connect attempt.
/// - `run` executes a body inside `BEGIN ISOLATION LEVEL … COMMIT` (or in autocommit), rolls back on error,
///   runs it again on a serialization failure or deadlock (`40001`, `40P01`, up to 10 times with a short
///   random pause), and on a lost connection reconnects and runs it again (twice at most). Bodies must
///   therefore be safe to repeat; the ledger's are (upserts keyed by transaction, notification IDs). A result
///   is returned only after `COMMIT` succeeded: nothing is reported committed unless it was.
package final class PostgresPool: Sendable {
    /// The isolation a transaction needs.
    package enum Isolation: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// Counters for tests and metrics.
    package struct Statistics: Sendable, Equatable {
        /// Transactions run again after a serialization failure or deadlock.
        package var conflictRetries = 0
        /// Connections opened after the first (replacing lost ones).
        package var reconnects = 0
        /// Connection attempts that failed.
        package var failedConnects = 0
    }

    private struct State {
        var free: [PostgresSession]
        var waiters: [CheckedContinuation<PostgresSession?, Never>] = []
        var closed = false
        var statistics = Statistics()
    }

    let location: PostgresLocation
    let backoff: ReconnectBackoff
    private let sessions: [PostgresSession]
    private let state: Mutex<State>
    private let application: String

    /// A pool of `size` connections to `location`; `application` names them in `pg_stat_activity`.
    package init(location: PostgresLocation, size: Int, application: String = "depot-ledger", backoff: ReconnectBackoff = ReconnectBackoff()) {
        self.location = location
        self.backoff = backoff
        self.application = application
        let sessions = (0..<max(size, 1)).map { PostgresSession(label: "depot.ledger.postgres.\($0)") }
        self.sessions = sessions
        self.state = Mutex(State(free: sessions))
    }

    /// The counters so far.
    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// Runs `body` on a pooled connection, in a transaction with `isolation` (autocommit when `nil`), with the
    /// retries described above. Failures that are not about the connection become `failure(message)`.
    package func run<Value: Sendable>(
        _ isolation: Isolation?, readOnly: Bool = false,
        failure: @escaping @Sendable (String) -> LedgerError,
        _ body: @escaping @Sendable (PostgresConnection) throws(PostgresError) -> Value
    ) async throws(LedgerError) -> Value {
        guard let session = await acquire() else { throw .closed }
        let result: Result<Value, LedgerError> = await withCheckedContinuation { continuation in
            session.queue.async {
                continuation.resume(returning: self.execute(on: session, isolation, readOnly: readOnly, failure: failure, body))
            }
        }
        release(session)
        return try result.get()
    }

    /// Opens one connection now (start-up checks the location with it), mapping a failure to `.openFailed`.
    func connectNow() async throws(LedgerError) {
        let location = location
        try await run(nil, failure: { .openFailed(path: location.description, message: $0) }) { _ throws(PostgresError) in }
    }

    /// Closes every connection after the calls in flight; later calls throw `.closed`.
    package func close() async {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        waiters.forEach { $0.resume(returning: nil) }
        for session in sessions {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                session.queue.async {
                    session.drop()
                    continuation.resume()
                }
            }
        }
    }

    /// A new connection to `location` (blocking; call it on a session's queue or another dedicated thread).
    func connect(application: String? = nil) throws(PostgresError) -> PostgresConnection {
        do {
            return try PostgresConnection(parameters: location.connectionParameters(application: application ?? self.application))
        } catch {
            throw PostgresError(sqlState: error.sqlState, message: location.redact(error.message), connectionLost: true)
        }
    }

    // MARK: - Private

    private var isClosed: Bool { state.withLock { $0.closed } }

    private func acquire() async -> PostgresSession? {
        await withCheckedContinuation { continuation in
            let session: PostgresSession?? = state.withLock { state in
                if state.closed { return .some(nil) }
                if let session = state.free.popLast() { return .some(session) }
                state.waiters.append(continuation)
                return .none
            }
            if let session { continuation.resume(returning: session) }
        }
    }

    private func release(_ session: PostgresSession) {
        let waiter: CheckedContinuation<PostgresSession?, Never>? = state.withLock { state in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.free.append(session)
            return nil
        }
        waiter?.resume(returning: session)
    }

    /// The body of `run`, on the session's queue.
    private func execute<Value>(
        on session: PostgresSession, _ isolation: Isolation?, readOnly: Bool,
        failure: (String) -> LedgerError, _ body: (PostgresConnection) throws(PostgresError) -> Value
    ) -> Result<Value, LedgerError> {
        var conflicts = 0
        var losses = 0
        while true {
            guard !isClosed else { return .failure(.closed) }
            let connection: PostgresConnection
            do {
                connection = try session.connection { () throws(PostgresError) in try self.openConnection(replacing: session.hasConnected) }
            } catch {
                return .failure(.unavailable(message: error.message))
            }
            do throws(PostgresError) {
                if let isolation {
                    try connection.execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)\(readOnly ? " READ ONLY" : "")")
                }
                let value = try body(connection)
                if isolation != nil { try connection.execute("COMMIT") }
                return .success(value)
            } catch {
                if error.connectionLost || !connection.isConnected {
                    session.drop()
                    losses += 1
                    if losses <= 2 { continue }
                    return .failure(.unavailable(message: location.redact(error.description)))
                }
                if isolation != nil { try? connection.execute("ROLLBACK") }
                if error.isRetryableConflict && conflicts < 10 {
                    conflicts += 1
                    state.withLock { $0.statistics.conflictRetries += 1 }
                    usleep(UInt32.random(in: 1_000...(5_000 * UInt32(conflicts))))
                    continue
                }
                return .failure(failure(location.redact(error.description)))
            }
        }
    }

    /// Opens a connection for a session, unless the backoff says the server was just found down.
    private func openConnection(replacing: Bool) throws(PostgresError) -> PostgresConnection {
        guard backoff.permitsAttempt() else {
            throw PostgresError(message: "the database was unreachable a moment ago; retrying shortly", connectionLost: true)
        }
        do {
            let connection = try connect()
            backoff.recordSuccess()
            if replacing { state.withLock { $0.statistics.reconnects += 1 } }
            return connection
        } catch {
            backoff.recordFailure()
            state.withLock { $0.statistics.failedConnects += 1 }
            throw error
        }
    }
}
