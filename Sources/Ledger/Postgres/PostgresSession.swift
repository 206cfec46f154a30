import Dispatch

/// One pooled connection and the serial queue it is used on.
final class PostgresSession: @unchecked Sendable { // @unchecked: `current` and `connected` are touched only on `queue`.
    /// The queue every call on this connection runs on.
    let queue: DispatchQueue
    private var current: PostgresConnection?
    private var connected = false

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Whether this session has had a connection before (a new one replaces it).
    var hasConnected: Bool { connected }

    /// The connection if it is open (no attempt to open one).
    var openConnection: PostgresConnection? {
        guard let current, current.isConnected else { return nil }
        return current
    }

    /// The open connection, or a new one from `open`.
    func connection(_ open: () throws(PostgresError) -> PostgresConnection) throws(PostgresError) -> PostgresConnection {
        if let current, current.isConnected { return current }
        current?.close()
        current = nil
        let connection = try open()
        current = connection
        connected = true
        return connection
    }

    /// Closes and forgets the connection (lost, or the pool closes).
    func drop() {
        current?.close()
        current = nil
    }
}
