import Dispatch

/// Publish locks on PostgreSQL: a session advisory lock (`PostgresLedgerSchema.publishLockNamespace`,
/// `hashtext(pack)`) held on a connection of its own for as long as the publish runs, so it holds across
/// hosts. Waiting for it blocks only that session's queue.
enum PostgresPublishLock {
    /// Opens a session, waits until the lock for `pack` is granted, and returns the handle that releases it.
    static func acquire(pack: String, pool: PostgresPool) async throws(LedgerError) -> LedgerPublishLock {
        let session = PostgresSession(label: "depot.ledger.publish-lock")
        let keys: [PostgresValue] = [.integer(Int64(PostgresLedgerSchema.publishLockNamespace)), .text(pack)]
        let location = pool.location
        let acquired: Result<Void, LedgerError> = await withCheckedContinuation { continuation in
            session.queue.async {
                do throws(PostgresError) {
                    let connection = try session.connection { () throws(PostgresError) in
                        try pool.connect(application: "depot-ledger-publish-lock")
                    }
                    try connection.query("SELECT pg_advisory_lock($1::int4, hashtext($2))", keys)
                    continuation.resume(returning: .success(()))
                } catch {
                    session.drop()
                    let message = location.redact(error.description)
                    continuation.resume(returning: .failure(error.connectionLost ? .unavailable(message: message) : .writeFailed(message: message)))
                }
            }
        }
        try acquired.get()
        return LedgerPublishLock(
            release: {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    session.queue.async {
                        _ = try? session.openConnection?.query("SELECT pg_advisory_unlock($1::int4, hashtext($2))", keys)
                        session.drop()
                        continuation.resume()
                    }
                }
            },
            isHeld: {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    session.queue.async {
                        let held = try? session.openConnection?.query(
                            """
                            SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                              AND classid = $1::int4::oid AND objid = hashtext($2)::oid AND objsubid = 2
                            """, keys)
                        continuation.resume(returning: (held?.rows.count ?? 0) == 1)
                    }
                }
            })
    }
}
