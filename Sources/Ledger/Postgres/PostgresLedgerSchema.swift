/// The PostgreSQL ledger's tables and how they are brought up to date.
///
/// `ledger_migrations` holds one row per migration applied (`version`, `applied_at`). At open, under a
/// session advisory lock (`lockNamespace`, `migrationLock`), the missing migrations run, each in its own
/// transaction together with its row, so N instances starting together migrate once and a crash leaves the
/// database at the old or the new version. A database whose highest version is above `currentVersion` was
/// written by a newer program and is refused with both versions named.
///
/// The tables mirror SQLite's (`SQLiteLedgerSchema`) column for column, times in `bigint` milliseconds and
/// text in the `C` collation (byte order, as SQLite compares), plus what many writers need:
///
/// - `transactions`, `account_bindings`, `revocations`, `processed_notifications`, `ledger_settings`,
///   `notification_sync_windows` (version 2): as in SQLite (`value` is `bytea`).
/// - `delivery_files`, `delivered_chunks`, `outbox`, `revocations.restored_by` (version 3, the deliveries and
///   outbox migration): as in SQLite (`outbox.id` is an identity column).
/// - `account_bindings_by_account` (version 4): as SQLite's version 5.
/// - `delivery_files.version_chunks`, `version_bytes` (version 5): as SQLite's version 6 (`bigint`).
/// - `live_versions` (version 6): as SQLite's version 7.
/// - `original_transactions` — one row per original transaction the ledger has been asked about:
///   `original_transaction_id` (PK) and `changed_xid` (`xid8`), the transaction that last changed its access
///   state. Every write takes this row's lock (`INSERT … ON CONFLICT DO UPDATE`, in ID order) before reading or changing
///   bindings and revocations, which makes `first` bindings exactly-once and `transfer` last-committer-wins
///   across instances. The change feed reads the rows whose `changed_xid` is at or above the `xmin` of its
///   previous snapshot (indexed), so a change is found whatever order concurrent writers commit in.
package enum PostgresLedgerSchema {
    /// The advisory-lock namespace of the ledger (`'DepL'`); the second key says which lock.
    static let lockNamespace: Int32 = 0x4465_704C
    /// The second advisory-lock key for migrations.
    static let migrationLock: Int32 = 1
    /// The second advisory-lock key for publish locks is `hashtext(pack)`: publish locks use this namespace.
    static let publishLockNamespace: Int32 = 0x4465_7050

    /// The migrations, in order; migration *n* (1-based) brings the database to version *n*.
    /// Append only: never edit a migration that has shipped.
    package static let migrations: [String] = [
        // 1: the initial schema.
        """
        CREATE TABLE transactions (
            transaction_id text COLLATE "C" PRIMARY KEY,
            original_transaction_id text COLLATE "C" NOT NULL,
            product_id text COLLATE "C" NOT NULL,
            environment text COLLATE "C" NOT NULL,
            purchase_date_ms bigint NOT NULL,
            expires_date_ms bigint,
            revocation_date_ms bigint,
            source text COLLATE "C" NOT NULL CHECK (source IN ('receipt', 'jws')),
            first_seen_ms bigint NOT NULL,
            updated_ms bigint NOT NULL
        );
        CREATE INDEX transactions_by_original ON transactions (original_transaction_id, purchase_date_ms);
        CREATE TABLE account_bindings (
            original_transaction_id text COLLATE "C" NOT NULL,
            account text COLLATE "C" NOT NULL,
            bound_at_ms bigint NOT NULL,
            PRIMARY KEY (original_transaction_id, account)
        );
        CREATE TABLE revocations (
            transaction_id text COLLATE "C" PRIMARY KEY,
            original_transaction_id text COLLATE "C" NOT NULL,
            revoked_at_ms bigint NOT NULL,
            reason text COLLATE "C" NOT NULL,
            restored_at_ms bigint
        );
        CREATE INDEX revocations_by_original ON revocations (original_transaction_id);
        CREATE TABLE processed_notifications (
            id text COLLATE "C" PRIMARY KEY,
            type text COLLATE "C" NOT NULL,
            received_ms bigint NOT NULL
        );
        CREATE TABLE ledger_settings (
            name text COLLATE "C" PRIMARY KEY,
            value bytea NOT NULL
        );
        CREATE TABLE original_transactions (
            original_transaction_id text COLLATE "C" PRIMARY KEY,
            changed_xid xid8 NOT NULL
        );
        CREATE INDEX original_transactions_by_change ON original_transactions (changed_xid);
        """,
        // 2: the notification catch-up windows (as SQLite's version 3).
        """
        CREATE TABLE notification_sync_windows (
            environment text COLLATE "C" PRIMARY KEY,
            synced_through_ms bigint,
            claimed_by text COLLATE "C",
            claim_expires_ms bigint
        );
        """,
        // 3: delivery records and the outbox (webhooks, consumption answers), as in SQLite's version 4.
        """
        CREATE TABLE delivery_files (
            original_transaction_id text COLLATE "C" NOT NULL,
            pack text COLLATE "C" NOT NULL,
            version integer NOT NULL,
            path text COLLATE "C" NOT NULL,
            sent_ranges text NOT NULL,
            first_sent_ms bigint NOT NULL,
            last_sent_ms bigint NOT NULL,
            PRIMARY KEY (original_transaction_id, pack, version, path)
        );
        CREATE TABLE delivered_chunks (
            original_transaction_id text COLLATE "C" NOT NULL,
            pack text COLLATE "C" NOT NULL,
            version integer NOT NULL,
            path text COLLATE "C" NOT NULL,
            chunk_offset bigint NOT NULL,
            chunk_length bigint NOT NULL,
            delivered_ms bigint NOT NULL,
            PRIMARY KEY (original_transaction_id, pack, version, path, chunk_offset)
        );
        CREATE TABLE outbox (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            queue text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL UNIQUE,
            ordering_key text COLLATE "C" NOT NULL,
            payload text NOT NULL,
            created_ms bigint NOT NULL,
            deadline_ms bigint NOT NULL,
            state text COLLATE "C" NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'abandoned')),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_ms bigint NOT NULL,
            claimed_by text COLLATE "C",
            claim_expires_ms bigint,
            finished_ms bigint,
            last_error text,
            outcome text
        );
        CREATE INDEX outbox_due ON outbox (queue, state, next_attempt_ms);
        CREATE INDEX outbox_by_ordering ON outbox (queue, ordering_key, id);
        ALTER TABLE revocations ADD COLUMN restored_by text COLLATE "C";
        """,
        // 4: an account's purchases (the support view's look-up by account).
        """
        CREATE INDEX account_bindings_by_account ON account_bindings (account, original_transaction_id);
        """,
        // 5: the pack version's totals with each delivery record (as SQLite's version 6).
        """
        ALTER TABLE delivery_files ADD COLUMN version_chunks bigint, ADD COLUMN version_bytes bigint;
        """,
        // 6: the live version per pack as last announced (as SQLite's version 7).
        """
        CREATE TABLE live_versions (
            pack text COLLATE "C" PRIMARY KEY,
            version integer NOT NULL,
            announcements integer NOT NULL,
            changed_ms bigint NOT NULL
        );
        """,
    ]

    /// The version of a database that has every migration applied.
    package static var currentVersion: Int { migrations.count }

    /// Applies the missing migrations on `connection` (autocommit; the body opens its own transactions),
    /// holding the migration advisory lock.
    static func migrate(_ connection: PostgresConnection, migrations: [String] = migrations) throws(PostgresMigrationError) {
        let lock: [PostgresValue] = [.integer(Int64(lockNamespace)), .integer(Int64(migrationLock))]
        do {
            try connection.query("SELECT pg_advisory_lock($1::int4, $2::int4)", lock)
        } catch {
            throw PostgresMigrationError(version: 0, underlying: error)
        }
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1::int4, $2::int4)", lock) }
        let found: Int
        do {
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS ledger_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            found = Int(try connection.query("SELECT COALESCE(MAX(version), 0) FROM ledger_migrations").scalar ?? "0") ?? 0
        } catch {
            throw PostgresMigrationError(version: 0, underlying: error)
        }
        guard found <= migrations.count else {
            throw PostgresMigrationError(version: found, newerThan: migrations.count)
        }
        guard found < migrations.count else { return }
        for version in (found + 1)...migrations.count {
            do {
                try connection.execute("BEGIN")
                try connection.execute(migrations[version - 1])
                try connection.query("INSERT INTO ledger_migrations (version) VALUES ($1::int4)", [.integer(Int64(version))])
                try connection.execute("COMMIT")
            } catch {
                if connection.isConnected { try? connection.execute("ROLLBACK") }
                throw PostgresMigrationError(version: version, underlying: error)
            }
        }
    }
}
