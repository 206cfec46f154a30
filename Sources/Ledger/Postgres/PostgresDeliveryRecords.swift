import Foundation

/// The SQL of the delivery record on PostgreSQL, run in a pooled `READ COMMITTED` transaction. Each file's
/// row is locked (`FOR UPDATE`, after an insert that creates it if new) before its ranges are merged, so two
/// instances recording pieces of one chunk at once both count: the chunk is delivered once, by whichever
/// commits the piece that completes it. Safe to run again after a lost connection (merging is idempotent).
struct PostgresDeliveryRecords {
    let connection: PostgresConnection

    /// See `SQLiteDeliveryRecords.record`.
    func record(_ spans: [DeliverySpan], events: DeliveryEvents? = nil) throws(PostgresError) -> [DeliveryProgress] {
        var progress: [DeliveryProgress] = []
        // One lock order for every writer: by purchase, pack, version and path.
        let ordered = spans.filter { !$0.sent.isEmpty }.sorted {
            ($0.originalTransactionID, $0.pack, $0.version, $0.path) < ($1.originalTransactionID, $1.pack, $1.version, $1.path)
        }
        for span in ordered {
            let key: [PostgresValue] = [.text(span.originalTransactionID), .text(span.pack),
                                        .integer(Int64(span.version)), .text(span.path)]
            let sentMS = LedgerTime.milliseconds(span.sentAt)
            try connection.query(
                """
                INSERT INTO delivery_files (original_transaction_id, pack, version, path, sent_ranges, first_sent_ms, last_sent_ms)
                VALUES ($1, $2, $3::int4, $4, '', $5, $5) ON CONFLICT DO NOTHING
                """, key + [.integer(sentMS)])
            let row = try connection.query(
                """
                SELECT sent_ranges FROM delivery_files
                WHERE original_transaction_id = $1 AND pack = $2 AND version = $3::int4 AND path = $4 FOR UPDATE
                """, key).scalar
            let before = row.flatMap(ByteCoverage.init(encoded:)) ?? ByteCoverage()
            var coverage = before
            coverage.formUnion(span.sent)
            // Only the chunks this write completes (those covered before were recorded by the write that covered
            // them), found on the whole union, before the stored ranges are trimmed.
            let covered = coverage.newlyCoveredChunks(span.chunks, before: before)
            coverage.trim(keeping: span.chunks)
            let totals: [PostgresValue] = span.versionTotals.map { [.integer(Int64($0.chunks)), .integer($0.bytes)] } ?? [.null, .null]
            try connection.query(
                """
                UPDATE delivery_files SET sent_ranges = $5, first_sent_ms = LEAST(first_sent_ms, $6),
                    last_sent_ms = GREATEST(last_sent_ms, $6), version_chunks = COALESCE($7::int8, version_chunks),
                    version_bytes = COALESCE($8::int8, version_bytes)
                WHERE original_transaction_id = $1 AND pack = $2 AND version = $3::int4 AND path = $4
                """, key + [.text(coverage.encoded), .integer(sentMS)] + totals)
            guard !covered.isEmpty else { continue }
            let inserted = try connection.query(
                """
                INSERT INTO delivered_chunks (original_transaction_id, pack, version, path, chunk_offset, chunk_length, delivered_ms)
                SELECT $1, $2, $3::int4, $4, c.offset_, c.length_, $7
                FROM unnest($5::bigint[], $6::bigint[]) AS c(offset_, length_)
                ON CONFLICT DO NOTHING
                """,
                key + [.integerArray(covered.map(\.lowerBound)), .integerArray(covered.map { $0.upperBound - $0.lowerBound }),
                       .integer(sentMS)]).affectedRows
            if inserted > 0 { DeliveryProgress.add(inserted, for: span, to: &progress) }
        }
        if let events {
            let completions = try DeliveryCompletion.found(in: progress, spans: spans) { (original, pack, version) throws(PostgresError) in
                let row = try connection.query(
                    """
                    SELECT count(*), COALESCE(sum(chunk_length), 0) FROM delivered_chunks
                    WHERE original_transaction_id = $1 AND pack = $2 AND version = $3::int4
                    """, [.text(original), .text(pack), .integer(Int64(version))]).rows.first
                return (Int(row?[0] ?? "") ?? 0, Int64(row?[1] ?? "") ?? 0)
            }
            try PostgresOutbox(connection: connection).insert(completions.compactMap(events))
        }
        return progress
    }

    /// See `SQLiteDeliveryRecords.deliveries(originalTransactionID:)`.
    func deliveries(originalTransactionID: String) throws(PostgresError) -> [LedgerDelivery] {
        try deliveries(of: [originalTransactionID])
    }

    /// See `SQLiteDeliveryRecords.deliveries(of:)`: two statements, however many purchases.
    func deliveries(of originals: [String]) throws(PostgresError) -> [LedgerDelivery] {
        let ids = PostgresValue.textArray(originals)
        let files = try connection.query(
            """
            SELECT original_transaction_id, pack, version, path, sent_ranges, first_sent_ms, last_sent_ms, version_chunks, version_bytes
            FROM delivery_files WHERE original_transaction_id = ANY($1::text[])
            ORDER BY original_transaction_id, pack, version, path
            """, [ids]).rows
        var chunks: [String: [DeliveredChunk]] = [:]
        for row in try connection.query(
            """
            SELECT original_transaction_id, pack, version, path, chunk_offset, chunk_length, delivered_ms FROM delivered_chunks
            WHERE original_transaction_id = ANY($1::text[]) ORDER BY original_transaction_id, pack, version, path, chunk_offset
            """, [ids]).rows {
            let file = LedgerDelivery.fileKey(original: row[0] ?? "", pack: row[1] ?? "", version: Int(row[2] ?? "") ?? 0, path: row[3] ?? "")
            chunks[file, default: []].append(DeliveredChunk(
                offset: Int64(row[4] ?? "") ?? 0, length: Int64(row[5] ?? "") ?? 0,
                deliveredAt: LedgerTime.date(Int64(row[6] ?? "") ?? 0)))
        }
        return files.map { row in
            let (original, pack, version, path) = (row[0] ?? "", row[1] ?? "", Int(row[2] ?? "") ?? 0, row[3] ?? "")
            return LedgerDelivery(
                originalTransactionID: original, pack: pack, version: version, path: path,
                chunks: chunks[LedgerDelivery.fileKey(original: original, pack: pack, version: version, path: path)] ?? [],
                sent: (row[4]).flatMap(ByteCoverage.init(encoded:)) ?? ByteCoverage(),
                firstSent: LedgerTime.date(Int64(row[5] ?? "") ?? 0), lastSent: LedgerTime.date(Int64(row[6] ?? "") ?? 0),
                versionTotals: row[7].flatMap { Int($0) }.flatMap { chunks in row[8].flatMap { Int64($0) }.map { VersionTotals(chunks: chunks, bytes: $0) } })
        }
    }
}
