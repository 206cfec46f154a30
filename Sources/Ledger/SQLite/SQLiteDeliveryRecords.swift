import Foundation

/// The SQL of the delivery record (tables `delivery_files` and `delivered_chunks`) on SQLite, run on the
/// ledger's queue against its one connection; each write is one `BEGIN IMMEDIATE … COMMIT`.
struct SQLiteDeliveryRecords {
    let database: SQLiteDatabase

    /// Merges `spans` into the record and marks the chunks now covered whole; returns the chunks newly
    /// delivered per purchase and pack version. A version this write completes is announced by `events`'s entry,
    /// queued in the same transaction (so the record and its announcement are written together or not at all).
    func record(_ spans: [DeliverySpan], events: DeliveryEvents? = nil) throws(SQLiteError) -> [DeliveryProgress] {
        try database.transaction { () throws(SQLiteError) -> [DeliveryProgress] in
            var progress: [DeliveryProgress] = []
            for span in spans where !span.sent.isEmpty {
                let key: [SQLiteValue] = [.text(span.originalTransactionID), .text(span.pack),
                                          .integer(Int64(span.version)), .text(span.path)]
                let row = try database.query(
                    """
                    SELECT sent_ranges, first_sent_ms FROM delivery_files
                    WHERE original_transaction_id = ? AND pack = ? AND version = ? AND path = ?
                    """, key).first
                let before = row.flatMap { $0[0].text }.flatMap(ByteCoverage.init(encoded:)) ?? ByteCoverage()
                var coverage = before
                coverage.formUnion(span.sent)
                // Only the chunks this write completes (those covered before were recorded by the write that covered
                // them), found on the whole union, before the stored ranges are trimmed.
                let covered = coverage.newlyCoveredChunks(span.chunks, before: before)
                coverage.trim(keeping: span.chunks)
                let sentMS = LedgerTime.milliseconds(span.sentAt)
                let firstMS = min(row?[1].integer ?? sentMS, sentMS)
                let totals: [SQLiteValue] = span.versionTotals.map { [.integer(Int64($0.chunks)), .integer($0.bytes)] } ?? [.null, .null]
                try database.run(
                    """
                    INSERT INTO delivery_files (original_transaction_id, pack, version, path, sent_ranges, first_sent_ms, last_sent_ms,
                        version_chunks, version_bytes)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (original_transaction_id, pack, version, path) DO UPDATE SET
                        sent_ranges = excluded.sent_ranges, first_sent_ms = excluded.first_sent_ms,
                        last_sent_ms = MAX(last_sent_ms, excluded.last_sent_ms),
                        version_chunks = COALESCE(excluded.version_chunks, version_chunks),
                        version_bytes = COALESCE(excluded.version_bytes, version_bytes)
                    """, key + [.text(coverage.encoded), .integer(firstMS), .integer(sentMS)] + totals)
                var newChunks = 0
                for chunk in covered {
                    newChunks += try database.run(
                        """
                        INSERT INTO delivered_chunks (original_transaction_id, pack, version, path, chunk_offset, chunk_length, delivered_ms)
                        VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                        """, key + [.integer(chunk.lowerBound), .integer(chunk.upperBound - chunk.lowerBound), .integer(sentMS)])
                }
                if newChunks > 0 {
                    DeliveryProgress.add(newChunks, for: span, to: &progress)
                }
            }
            if let events {
                let completions = try DeliveryCompletion.found(in: progress, spans: spans) { (original, pack, version) throws(SQLiteError) in
                    let row = try database.query(
                        """
                        SELECT count(*), COALESCE(sum(chunk_length), 0) FROM delivered_chunks
                        WHERE original_transaction_id = ? AND pack = ? AND version = ?
                        """, [.text(original), .text(pack), .integer(Int64(version))]).first
                    return (Int(row?[0].integer ?? 0), row?[1].integer ?? 0)
                }
                for entry in completions.compactMap(events) { try SQLiteOutbox(database: database).insert(entry) }
            }
            return progress
        }
    }

    /// Every file record of `originalTransactionID`, by pack, version and path.
    func deliveries(originalTransactionID: String) throws(SQLiteError) -> [LedgerDelivery] {
        try deliveries(of: [originalTransactionID])
    }

    /// Every file record of the purchases `originals`, by purchase, pack, version and path: two statements,
    /// however many purchases.
    func deliveries(of originals: [String]) throws(SQLiteError) -> [LedgerDelivery] {
        let ids = SQLiteValue.textList(originals)
        let files = try database.query(
            """
            SELECT original_transaction_id, pack, version, path, sent_ranges, first_sent_ms, last_sent_ms, version_chunks, version_bytes
            FROM delivery_files WHERE original_transaction_id IN (SELECT value FROM json_each(?))
            ORDER BY original_transaction_id, pack, version, path
            """, [ids])
        var chunks: [String: [DeliveredChunk]] = [:]
        for row in try database.query(
            """
            SELECT original_transaction_id, pack, version, path, chunk_offset, chunk_length, delivered_ms FROM delivered_chunks
            WHERE original_transaction_id IN (SELECT value FROM json_each(?))
            ORDER BY original_transaction_id, pack, version, path, chunk_offset
            """, [ids]) {
            let file = LedgerDelivery.fileKey(original: row[0].text ?? "", pack: row[1].text ?? "", version: Int(row[2].integer ?? 0),
                                              path: row[3].text ?? "")
            chunks[file, default: []].append(DeliveredChunk(
                offset: row[4].integer ?? 0, length: row[5].integer ?? 0, deliveredAt: LedgerTime.date(row[6].integer ?? 0)))
        }
        return files.map { row in
            let (original, pack, version, path) = (row[0].text ?? "", row[1].text ?? "", Int(row[2].integer ?? 0), row[3].text ?? "")
            return LedgerDelivery(
                originalTransactionID: original, pack: pack, version: version, path: path,
                chunks: chunks[LedgerDelivery.fileKey(original: original, pack: pack, version: version, path: path)] ?? [],
                sent: row[4].text.flatMap(ByteCoverage.init(encoded:)) ?? ByteCoverage(),
                firstSent: LedgerTime.date(row[5].integer ?? 0), lastSent: LedgerTime.date(row[6].integer ?? 0),
                versionTotals: row[7].integer.flatMap { chunks in row[8].integer.map { VersionTotals(chunks: Int(chunks), bytes: $0) } })
        }
    }

    /// Every file record and delivered chunk, for the copy to PostgreSQL (inside the export's read); the version
    /// totals from schema version 6.
    func export(into export: inout LedgerExport, schemaVersion: Int) throws(SQLiteError) {
        let totals = schemaVersion >= 6 ? "version_chunks, version_bytes" : "NULL, NULL"
        export.deliveryFiles = try database.query(
            """
            SELECT original_transaction_id, pack, version, path, sent_ranges, first_sent_ms, last_sent_ms, \(totals) FROM delivery_files
            ORDER BY 1, 2, 3, 4
            """
        ).map { row in
            LedgerExport.DeliveryFile(
                originalTransactionID: row[0].text ?? "", pack: row[1].text ?? "", version: row[2].integer ?? 0,
                path: row[3].text ?? "", sentRanges: row[4].text ?? "", firstSentMS: row[5].integer ?? 0, lastSentMS: row[6].integer ?? 0,
                versionChunks: row[7].integer, versionBytes: row[8].integer)
        }
        export.chunks = try database.query(
            """
            SELECT original_transaction_id, pack, version, path, chunk_offset, chunk_length, delivered_ms FROM delivered_chunks
            ORDER BY 1, 2, 3, 4, 5
            """
        ).map { row in
            LedgerExport.Chunk(
                originalTransactionID: row[0].text ?? "", pack: row[1].text ?? "", version: row[2].integer ?? 0,
                path: row[3].text ?? "", offset: row[4].integer ?? 0, length: row[5].integer ?? 0, deliveredMS: row[6].integer ?? 0)
        }
    }
}
