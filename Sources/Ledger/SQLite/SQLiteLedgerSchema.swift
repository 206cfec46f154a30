/// The SQLite ledger's tables and how they are brought up to date.
///
/// `PRAGMA user_version` holds the number of migrations applied. At open, every migration past it runs in
/// its own `BEGIN IMMEDIATE … COMMIT` together with the `user_version` bump, so a crash leaves the file at
/// the old or the new version, never in between. A file whose version is higher than `migrations.count`
/// was written by a newer program and is refused.
///
/// Times are integer milliseconds since 1970 (`*_ms`), the App Store's own unit.
///
/// - `transactions` — one row per validated App Store transaction (receipt or JWS), upserted on every
///   sighting: `transaction_id` (PK), `original_transaction_id`, `product_id`, `environment`
///   (`Production`/`Sandbox`), `purchase_date_ms`, `expires_date_ms` (subscriptions), `revocation_date_ms`
///   (as the purchase data last reported it; informational), `source` (`receipt` | `jws`),
///   `first_seen_ms`, `updated_ms` (when the row last changed: a sighting with the same data rewrites
///   nothing). Indexed by original transaction and purchase date.
/// - `account_bindings` — which app accounts hold an original transaction: one row per
///   (`original_transaction_id`, `account`) with `bound_at_ms`. `transfer` keeps one row, `shared` many.
/// - `revocations` — refunds and revocations, authoritative for access: `transaction_id` (PK; a revocation
///   may name a transaction never seen in a receipt), `original_transaction_id`, `revoked_at_ms`, `reason`
///   (notification type, or `receipt`/`jws` when the purchase data carried the date), `restored_at_ms`
///   (set by `REFUND_REVERSED`; a row with it set is no longer in force).
/// - `processed_notifications` — App Store Server Notifications already applied: `id` (PK: V2
///   `notificationUUID`, or the caller's V1 key), `type`, `received_ms`.
/// - `ledger_settings` (version 2) — values the ledger keeps for its users by `name` (PK): `token_key`, the
///   download-token HMAC key (`tokenKey(generate:)`).
/// - `notification_sync_windows` (version 3) — the notification catch-up (app-store-server-api §6), one row per
///   environment: `synced_through_ms` (where the last successful sync ended; NULL before the first),
///   `claimed_by` and `claim_expires_ms` (the instance reading the next window, and until when).
/// - `delivery_files` (version 4, the deliveries and outbox migration) — what was sent of each pack file to
///   each purchase (app-store-server-api §7): PK (`original_transaction_id`, `pack`, `version`, `path`), `sent_ranges` (the
///   merged byte ranges sent, `ByteCoverage.encoded`), `first_sent_ms`, `last_sent_ms`.
/// - `delivered_chunks` — the chunks of those files sent whole: PK (`original_transaction_id`, `pack`,
///   `version`, `path`, `chunk_offset`), `chunk_length`, `delivered_ms` (when it first completed).
/// - `outbox` — the durable queues of webhook events and consumption answers: `id` (increasing), `queue`,
///   `key` (unique: queueing the same key twice adds nothing), `ordering_key` (one at a time, oldest first),
///   `payload`, `created_ms`, `deadline_ms`, `state` (`pending`, `sent`, `abandoned`), `attempts`,
///   `next_attempt_ms`, `claimed_by` and `claim_expires_ms` (the sender working on it), `finished_ms`,
///   `last_error`, `outcome` (what the attempt that sent it recorded: the answer sent, for a consumption answer).
/// - `revocations.restored_by` (same migration) — who restored a revocation: `apple` (`REFUND_REVERSED`) or
///   `admin` (a support decision); a support revocation has `reason` `support` and is keyed
///   `admin:<original transaction ID>:<n>`.
/// - `account_bindings_by_account` (version 5) — the index behind the support view's look-up of an account's
///   purchases (`account`, `original_transaction_id`).
/// - `delivery_files.version_chunks`, `version_bytes` (version 6) — the chunks and bytes of the file's whole
///   pack version when it was recorded (`VersionTotals`), so a refund request is judged after the version's
///   directory was pruned; NULL in rows written before (the answer then reads the manifest on disk).
/// - `live_versions` (version 7) — the live version of each pack as last recorded by a server, so that
///   `pack.published` is queued in the same transaction as the change it announces and a version made live
///   while no server ran is announced at the next start: `pack` (PK), `version`, `announcements` (how many
///   `pack.published` it raised: the outbox key's counter), `changed_ms`.
///
/// No foreign keys: notifications may arrive before the receipt that names their transaction.
package enum SQLiteLedgerSchema {
    /// The migrations, in order; migration *n* (1-based) brings the file to `user_version` *n*.
    /// Append only: never edit a migration that has shipped.
    package static let migrations: [String] = [
        // 1: the initial schema.
        """
        CREATE TABLE transactions (
            transaction_id TEXT PRIMARY KEY NOT NULL,
            original_transaction_id TEXT NOT NULL,
            product_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            purchase_date_ms INTEGER NOT NULL,
            expires_date_ms INTEGER,
            revocation_date_ms INTEGER,
            source TEXT NOT NULL CHECK (source IN ('receipt', 'jws')),
            first_seen_ms INTEGER NOT NULL,
            updated_ms INTEGER NOT NULL
        );
        CREATE INDEX transactions_by_original ON transactions (original_transaction_id, purchase_date_ms);
        CREATE TABLE account_bindings (
            original_transaction_id TEXT NOT NULL,
            account TEXT NOT NULL,
            bound_at_ms INTEGER NOT NULL,
            PRIMARY KEY (original_transaction_id, account)
        ) WITHOUT ROWID;
        CREATE TABLE revocations (
            transaction_id TEXT PRIMARY KEY NOT NULL,
            original_transaction_id TEXT NOT NULL,
            revoked_at_ms INTEGER NOT NULL,
            reason TEXT NOT NULL,
            restored_at_ms INTEGER
        );
        CREATE INDEX revocations_by_original ON revocations (original_transaction_id);
        CREATE TABLE processed_notifications (
            id TEXT PRIMARY KEY NOT NULL,
            type TEXT NOT NULL,
            received_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
        // 2: settings (the download-token key).
        """
        CREATE TABLE ledger_settings (
            name TEXT PRIMARY KEY NOT NULL,
            value BLOB NOT NULL
        ) WITHOUT ROWID;
        """,
        // 3: the notification catch-up windows.
        """
        CREATE TABLE notification_sync_windows (
            environment TEXT PRIMARY KEY NOT NULL,
            synced_through_ms INTEGER,
            claimed_by TEXT,
            claim_expires_ms INTEGER
        ) WITHOUT ROWID;
        """,
        // 4: delivery records and the outbox (webhooks, consumption answers).
        """
        CREATE TABLE delivery_files (
            original_transaction_id TEXT NOT NULL,
            pack TEXT NOT NULL,
            version INTEGER NOT NULL,
            path TEXT NOT NULL,
            sent_ranges TEXT NOT NULL,
            first_sent_ms INTEGER NOT NULL,
            last_sent_ms INTEGER NOT NULL,
            PRIMARY KEY (original_transaction_id, pack, version, path)
        ) WITHOUT ROWID;
        CREATE TABLE delivered_chunks (
            original_transaction_id TEXT NOT NULL,
            pack TEXT NOT NULL,
            version INTEGER NOT NULL,
            path TEXT NOT NULL,
            chunk_offset INTEGER NOT NULL,
            chunk_length INTEGER NOT NULL,
            delivered_ms INTEGER NOT NULL,
            PRIMARY KEY (original_transaction_id, pack, version, path, chunk_offset)
        ) WITHOUT ROWID;
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            queue TEXT NOT NULL,
            key TEXT NOT NULL UNIQUE,
            ordering_key TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            deadline_ms INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'abandoned')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_ms INTEGER NOT NULL,
            claimed_by TEXT,
            claim_expires_ms INTEGER,
            finished_ms INTEGER,
            last_error TEXT,
            outcome TEXT
        );
        CREATE INDEX outbox_due ON outbox (queue, state, next_attempt_ms);
        CREATE INDEX outbox_by_ordering ON outbox (queue, ordering_key, id);
        ALTER TABLE revocations ADD COLUMN restored_by TEXT;
        """,
        // 5: an account's purchases (the support view's look-up by account).
        """
        CREATE INDEX account_bindings_by_account ON account_bindings (account, original_transaction_id);
        """,
        // 6: the pack version's totals with each delivery record.
        """
        ALTER TABLE delivery_files ADD COLUMN version_chunks INTEGER;
        ALTER TABLE delivery_files ADD COLUMN version_bytes INTEGER;
        """,
        // 7: the live version per pack as last announced.
        """
        CREATE TABLE live_versions (
            pack TEXT PRIMARY KEY NOT NULL,
            version INTEGER NOT NULL,
            announcements INTEGER NOT NULL,
            changed_ms INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
    ]

    /// The `user_version` of a file that has every migration applied.
    package static var currentVersion: Int { migrations.count }

    /// The file's `user_version`, refusing a file written by a newer program.
    static func checkVersion(_ database: SQLiteDatabase) throws(LedgerError) -> Int {
        let found: Int
        do {
            found = Int(try database.query("PRAGMA user_version").first?.first?.integer ?? 0)
        } catch {
            throw .migrationFailed(version: 0, message: error.message)
        }
        guard found <= currentVersion else {
            throw .migrationFailed(
                version: found,
                message: "the file is at schema version \(found), newer than this program's \(currentVersion)")
        }
        return found
    }

    /// Applies the missing migrations to `database`.
    static func migrate(_ database: SQLiteDatabase) throws(LedgerError) {
        let found = try checkVersion(database)
        guard found < currentVersion else { return }
        for version in (found + 1)...currentVersion {
            do {
                try database.transaction { () throws(SQLiteError) in
                    try database.execute(migrations[version - 1])
                    try database.execute("PRAGMA user_version = \(version)")
                }
            } catch {
                throw .migrationFailed(version: version, message: error.message)
            }
        }
    }
}
