extension PostgresLedgerStore {
    /// Adds the export's delivery record and outbox rows that are not there yet, in the copy's transaction:
    /// files and chunks by their keys (a file already recorded here keeps its own ranges), outbox items by
    /// their unique key, in the SQLite order (new IDs, no claims). Returns (delivery rows, outbox rows) added.
    func importRecords(_ export: LedgerExport) throws(PostgresError) -> (deliveries: Int, outbox: Int) {
        var deliveries = 0
        for batch in export.deliveryFiles.chunked(Self.importBatch) {
            deliveries += try connection.query(
                """
                INSERT INTO delivery_files (original_transaction_id, pack, version, path, sent_ranges, first_sent_ms, last_sent_ms,
                    version_chunks, version_bytes)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]::integer[], $4::text[], $5::text[], $6::bigint[],
                    $7::bigint[], $8::bigint[], $9::bigint[])
                ON CONFLICT (original_transaction_id, pack, version, path) DO NOTHING
                """,
                [.textArray(batch.map(\.originalTransactionID)), .textArray(batch.map(\.pack)), .integerArray(batch.map(\.version)),
                 .textArray(batch.map(\.path)), .textArray(batch.map(\.sentRanges)), .integerArray(batch.map(\.firstSentMS)),
                 .integerArray(batch.map(\.lastSentMS)), .integerArray(batch.map(\.versionChunks)),
                 .integerArray(batch.map(\.versionBytes))]).affectedRows
        }
        for batch in export.chunks.chunked(Self.importBatch) {
            deliveries += try connection.query(
                """
                INSERT INTO delivered_chunks (original_transaction_id, pack, version, path, chunk_offset, chunk_length, delivered_ms)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]::integer[], $4::text[], $5::bigint[], $6::bigint[],
                    $7::bigint[])
                ON CONFLICT DO NOTHING
                """,
                [.textArray(batch.map(\.originalTransactionID)), .textArray(batch.map(\.pack)), .integerArray(batch.map(\.version)),
                 .textArray(batch.map(\.path)), .integerArray(batch.map(\.offset)), .integerArray(batch.map(\.length)),
                 .integerArray(batch.map(\.deliveredMS))]).affectedRows
        }
        var outbox = 0
        for batch in export.outbox.chunked(Self.importBatch) {
            outbox += try connection.query(
                """
                INSERT INTO outbox (queue, key, ordering_key, payload, created_ms, deadline_ms, state, attempts, next_attempt_ms,
                    finished_ms, last_error, outcome)
                SELECT queue, key, ordering_key, payload, created_ms, deadline_ms, state, attempts, next_attempt_ms,
                    finished_ms, last_error, outcome
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[],
                    $8::bigint[]::integer[], $9::bigint[], $10::bigint[], $11::text[], $12::text[])
                    WITH ORDINALITY AS u(queue, key, ordering_key, payload, created_ms, deadline_ms, state, attempts,
                        next_attempt_ms, finished_ms, last_error, outcome, position)
                ORDER BY position
                ON CONFLICT (key) DO NOTHING
                """,
                [.textArray(batch.map(\.queue)), .textArray(batch.map(\.key)), .textArray(batch.map(\.orderingKey)),
                 .textArray(batch.map(\.payload)), .integerArray(batch.map(\.createdMS)), .integerArray(batch.map(\.deadlineMS)),
                 .textArray(batch.map(\.state)), .integerArray(batch.map(\.attempts)), .integerArray(batch.map(\.nextAttemptMS)),
                 .integerArray(batch.map(\.finishedMS)), .optionalTextArray(batch.map(\.lastError)),
                 .optionalTextArray(batch.map(\.outcome))]).affectedRows
        }
        return (deliveries, outbox)
    }
}
