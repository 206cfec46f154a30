import CPostgres
import Glibc

/// libpq's Swift face; the only file that imports `CPostgres`.
///
/// One connection to a PostgreSQL server. libpq connections are not safe to share between threads, so its
/// owner confines every call to one serial queue or thread; every call blocks that thread (never call it from
/// an event loop or Swift's cooperative pool). Statements with parameters are prepared once per connection
/// and reused (`PQprepare` + `PQexecPrepared`); results come back in text format.
package final class PostgresConnection {
    private var handle: OpaquePointer?
    /// Prepared statement names by SQL text.
    private var prepared: [String: String] = [:]
    /// Requests sent to the server and answered (each statement, each `PQprepare`), for round-trip budgets.
    package private(set) var roundTrips = 0

    /// Connects with libpq's keyword/value parameters (`host`, `port`, `dbname`, `user`, `password`,
    /// `sslmode`, ...); blocks until connected or failed (bounded by `connect_timeout` when given).
    package init(parameters: [(key: String, value: String)]) throws(PostgresError) {
        let keys = parameters.map { strdup($0.key) }
        let values = parameters.map { strdup($0.value) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordPointers = keys.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        let connection = PQconnectdbParams(keywordPointers, valuePointers, 0)
        guard let connection else { throw PostgresError(message: "out of memory", connectionLost: true) }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(message: message, connectionLost: true)
        }
        // libpq prints the server's notices (`relation … already exists, skipping` from the migrations) on
        // stderr, outside the server's log and into the output of commands such as `depot token`: drop them.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit { close() }

    /// The connection parameter keywords this libpq knows (`PQconndefaults`), to refuse unknown URI
    /// parameters before connecting.
    static let knownKeywords: Set<String> = {
        var names: Set<String> = []
        guard let options = PQconndefaults() else { return names }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()

    /// Whether the connection is open and healthy as far as libpq knows.
    var isConnected: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// The socket, for waiting on notifications with `poll(2)`; -1 when closed.
    var socketDescriptor: Int32 { handle.map { PQsocket($0) } ?? -1 }

    /// The server process serving this connection.
    var backendPID: Int32 { handle.map { PQbackendPID($0) } ?? 0 }

    /// Runs one statement with `parameters` bound to `$1`, `$2`, ...: prepared on first use, then reused.
    /// Text parameters must not contain NUL (PostgreSQL's text cannot hold it); bytes go in binary format.
    @discardableResult
    package func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresRows {
        let connection = try open()
        let name: String
        if let existing = prepared[sql] {
            name = existing
        } else {
            name = "depot_\(prepared.count + 1)"
            let result = PQprepare(connection, name, sql, Int32(parameters.count), nil)
            roundTrips += 1
            _ = try rows(of: result, connection)
            prepared[sql] = name
        }
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { buffers.forEach { free($0) } }
        for parameter in parameters {
            switch parameter {
            case .null:
                buffers.append(nil)
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                guard !text.utf8.contains(0) else {
                    throw PostgresError(sqlState: "22021", message: "a text parameter contains a NUL character")
                }
                buffers.append(strdup(text))
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                let buffer = malloc(max(bytes.count, 1))?.assumingMemoryBound(to: CChar.self)
                if let buffer, !bytes.isEmpty { bytes.withUnsafeBytes { _ = memcpy(buffer, $0.baseAddress!, bytes.count) } }
                buffers.append(buffer)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
        let values = buffers.map { UnsafePointer($0) }
        let result = PQexecPrepared(connection, name, Int32(parameters.count), values, lengths, formats, 0)
        roundTrips += 1
        return try rows(of: result, connection)
    }

    /// Runs one or more statements without parameters through the simple query protocol (migrations,
    /// `BEGIN`, `COMMIT`, `LISTEN`).
    package func execute(_ sql: String) throws(PostgresError) {
        let connection = try open()
        roundTrips += 1
        _ = try rows(of: PQexec(connection, sql), connection)
    }

    /// Reads what the server sent (`PQconsumeInput`) and returns the notifications received so far.
    package func notifications() throws(PostgresError) -> [PostgresNotification] {
        let connection = try open()
        guard PQconsumeInput(connection) == 1 else {
            throw PostgresError(message: String(cString: PQerrorMessage(connection)), connectionLost: true)
        }
        var received: [PostgresNotification] = []
        while let notify = PQnotifies(connection) {
            received.append(PostgresNotification(
                channel: String(cString: notify.pointee.relname), payload: String(cString: notify.pointee.extra),
                senderPID: notify.pointee.be_pid))
            PQfreemem(notify)
        }
        return received
    }

    /// Closes the connection (the server releases its session locks). Later calls fail as a lost connection.
    package func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        prepared.removeAll()
    }

    // MARK: - Private

    private func open() throws(PostgresError) -> OpaquePointer {
        guard let handle else { throw PostgresError(message: "the connection is closed", connectionLost: true) }
        return handle
    }

    /// Copies a result out of libpq (clearing it) or turns it into a `PostgresError`.
    private func rows(of result: OpaquePointer?, _ connection: OpaquePointer) throws(PostgresError) -> PostgresRows {
        guard let result else {
            throw PostgresError(message: String(cString: PQerrorMessage(connection)),
                                connectionLost: PQstatus(connection) != CONNECTION_OK)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let state = PQresultErrorField(result, cpostgres_diag_sqlstate()).map { String(cString: $0) }
            var message = String(cString: PQresultErrorMessage(result))
            if message.isEmpty { message = String(cString: PQerrorMessage(connection)) }
            if message.isEmpty { message = String(cString: PQresStatus(status)) }
            throw PostgresError(sqlState: state, message: message, connectionLost: PQstatus(connection) != CONNECTION_OK)
        }
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) == 1 {
                    values.append(nil)
                } else {
                    let count = Int(PQgetlength(result, row, column))
                    let bytes = UnsafeRawPointer(PQgetvalue(result, row, column)!).assumingMemoryBound(to: UInt8.self)
                    values.append(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
                }
            }
            rows.append(values)
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresRows(rows: rows, affectedRows: affected)
    }
}
