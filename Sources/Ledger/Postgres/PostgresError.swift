/// A failed libpq call or SQL statement, reduced to one line.
package struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The five-character SQLSTATE the server sent (`40001`, `23505`, ...); `nil` when the failure happened in
    /// libpq itself (no connection, connection lost, protocol error).
    var sqlState: String?
    /// libpq's or the server's message on one line. libpq never echoes a password; the location redacts
    /// it again before a message leaves the module.
    var message: String
    /// Whether the connection is gone (closed by the server, network failure, server shutting down): the
    /// statement's outcome is unknown and the connection must be replaced.
    var connectionLost: Bool

    /// A failure with its SQLSTATE (nil: libpq's own), its message (made one line) and whether the connection is gone.
    package init(sqlState: String? = nil, message: String, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = Self.oneLine(message)
        let state = sqlState ?? ""
        // Class 08 (connection exception) and 57P01–57P03 (the server is shutting down or restarting) end the
        // session, whatever libpq's status says at this instant.
        self.connectionLost = connectionLost || state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
    }

    /// A serialization failure (`40001`) or a deadlock (`40P01`): the transaction was rolled back and may be
    /// run again as is.
    var isRetryableConflict: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// The message, with the SQLSTATE when there is one.
    package var description: String {
        if let sqlState { return "\(message) (SQLSTATE \(sqlState))" }
        return message
    }

    /// Joins libpq's multi-line messages (`connection to server ... failed: ...\n\tIs the server running ...`)
    /// into one line.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0.isNewline || $0 == " " || $0 == "\t" })
            .joined(separator: " ")
    }
}
