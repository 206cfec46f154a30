import CSQLite
import Glibc

/// A value bound to, or read from, a SQLite statement.
package enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The integer, or `nil` for anything else.
    package var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The text, or `nil` for anything else.
    package var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes of a blob, or `nil` for anything else.
    var blob: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }

    /// `texts` as one JSON array, for SQL that reads a list of values from one parameter with
    /// `IN (SELECT value FROM json_each(?))`: one statement, however many values.
    package static func textList(_ texts: some Sequence<String>) -> SQLiteValue {
        var json = "["
        for (offset, text) in texts.enumerated() {
            if offset > 0 { json += "," }
            json += "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": json += "\\\""
                case "\\": json += "\\\\"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: json.unicodeScalars.append(scalar)
                }
            }
            json += "\""
        }
        return .text(json + "]")
    }
}

/// A failed SQLite call: the (extended) result code and SQLite's message.
package struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`SQLITE_READONLY`, `SQLITE_FULL`, ...).
    let code: Int32
    /// `sqlite3_errmsg` at the time of the failure, prefixed with what was being done.
    let message: String

    /// The code and the message, for logs.
    package var description: String { "SQLite error \(code): \(message)" }
}

/// libsqlite3's Swift face; the only file that imports `CSQLite`.
///
/// One connection, opened `SQLITE_OPEN_NOMUTEX`: it is not thread-safe, so its owner confines every call
/// to one serial queue. Prepared statements are cached per SQL text and reused.
package final class SQLiteDatabase: @unchecked Sendable { // @unchecked: used only from the owning Ledger's serial queue.
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// The statements run so far (each `query`/`run`, and each `execute` however many statements its text
    /// holds), for tests that hold a read to a budget.
    package private(set) var statementsRun = 0

    /// Opens (and with `create`, creates) the database file at `path`.
    package init(path: String, readOnly: Bool = false, create: Bool = true) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX
        if readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if create { flags |= SQLITE_OPEN_CREATE }
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: "open \(path): \(message)")
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    deinit { close() }

    /// Whether the connection is still open.
    var isOpen: Bool { handle != nil }

    /// Whether the connection is read-only (opened so, or the file could only be opened for reading).
    var isReadOnly: Bool {
        guard let handle else { return true }
        return sqlite3_db_readonly(handle, "main") == 1
    }

    /// Whether a transaction is open on the connection.
    var inTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        let db = try open()
        try check(sqlite3_busy_timeout(db, milliseconds), "busy_timeout")
    }

    /// Runs one or more statements that take no parameters and return nothing of interest.
    package func execute(_ sql: String) throws(SQLiteError) {
        let db = try open()
        statementsRun += 1
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(db), message: "\(sql): \(message)")
        }
    }

    /// Runs one statement with `values` bound to its `?` parameters; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        _ = try query(sql, values)
        guard let handle else { return 0 }
        return Int(sqlite3_changes(handle))
    }

    /// Runs one statement with `values` bound to its `?` parameters and returns every row it produced.
    package func query(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let db = try open()
        statementsRun += 1
        let statement = try prepared(sql, db)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(statement, index)
            case .integer(let number): rc = sqlite3_bind_int64(statement, index, number)
            case .real(let number): rc = sqlite3_bind_double(statement, index, number)
            case .text(let string): rc = sqlite3_bind_text(statement, index, string, -1, csqlite_transient())
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), csqlite_transient()) }
            }
            try check(rc, "bind \(index) of \(sql)")
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { try check(rc, sql); break }
            let count = sqlite3_column_count(statement)
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count {
                row.append(Self.value(of: statement, column: column))
            }
            rows.append(row)
        }
        return rows
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT` (the write lock is taken up front, so the transaction
    /// cannot fail half-way with `SQLITE_BUSY` on upgrade); rolls back if `body` or the commit fails.
    func transaction<Result>(_ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if inTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Copies this database, consistently, into a new file at `destination` with SQLite's online backup API
    /// while other connections (a running server) keep reading and writing it. The copy is written to a
    /// temporary file beside `destination`, fsync'd, then renamed over it, so `destination` is either the
    /// old file or a complete copy.
    func backup(to destination: String) throws(SQLiteError) {
        let source = try open()
        let temporary = destination + ".tmp-\(getpid())"
        unlink(temporary)
        let target = try SQLiteDatabase(path: temporary)
        defer { target.close() }
        guard let targetHandle = target.handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "backup target closed") }
        guard let backup = sqlite3_backup_init(targetHandle, "main", source, "main") else {
            let message = String(cString: sqlite3_errmsg(targetHandle))
            unlink(temporary)
            throw SQLiteError(code: sqlite3_extended_errcode(targetHandle), message: "backup to \(destination): \(message)")
        }
        var rc: Int32
        repeat {
            rc = sqlite3_backup_step(backup, -1)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { usleep(10_000) }
        } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finish == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(targetHandle))
            unlink(temporary)
            throw SQLiteError(code: rc == SQLITE_DONE ? finish : rc, message: "backup to \(destination): \(message)")
        }
        target.close()
        let fd = Glibc.open(temporary, O_RDONLY | O_CLOEXEC)
        let synced = fd >= 0 && fsync(fd) == 0
        if fd >= 0 { Glibc.close(fd) }
        guard synced, rename(temporary, destination) == 0 else {
            let code = errno
            unlink(temporary)
            throw SQLiteError(code: SQLITE_IOERR, message: "backup to \(destination): \(String(cString: strerror(code)))")
        }
        let directory = destination.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let directoryFD = Glibc.open(directory.isEmpty ? (destination.hasPrefix("/") ? "/" : ".") : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 { fsync(directoryFD); Glibc.close(directoryFD) }
    }

    /// Finalizes the cached statements and closes the connection. Later calls fail with `SQLITE_MISUSE`.
    package func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    // MARK: - Private

    private func open() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "database is closed") }
        return handle
    }

    private func prepared(_ sql: String, _ db: OpaquePointer) throws(SQLiteError) -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: sqlite3_extended_errcode(db), message: "prepare \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        statements[sql] = statement
        return statement
    }

    private func check(_ rc: Int32, _ context: String) throws(SQLiteError) {
        guard rc != SQLITE_OK else { return }
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        let code = handle.map { sqlite3_extended_errcode($0) } ?? rc
        throw SQLiteError(code: code, message: "\(context): \(message)")
    }

    private static func value(of statement: OpaquePointer, column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(statement, column))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        case SQLITE_TEXT:
            guard let bytes = sqlite3_column_text(statement, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        default:
            return .null
        }
    }
}
