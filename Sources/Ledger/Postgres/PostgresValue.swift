/// A parameter sent with a statement: text (the server converts it to the parameter's type) or raw bytes
/// sent in binary format (for `bytea`).
package enum PostgresValue: Sendable, Equatable {
    case null
    case text(String)
    case bytes([UInt8])

    /// An integer parameter (sent as its decimal text).
    package static func integer(_ value: Int64) -> PostgresValue { .text(String(value)) }

    /// An optional integer parameter (`NULL` when absent).
    static func integer(_ value: Int64?) -> PostgresValue { value.map { .text(String($0)) } ?? .null }

    /// A `text[]` parameter in PostgreSQL's array literal syntax: every element quoted, `"` and `\` escaped,
    /// so any string (commas, braces, `NULL`) arrives as itself. Cast it in SQL: `$1::text[]`.
    static func textArray(_ elements: some Sequence<String>) -> PostgresValue {
        var literal = "{"
        var first = true
        for element in elements {
            if !first { literal += "," }
            first = false
            literal += "\""
            for character in element {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.append(character)
            }
            literal += "\""
        }
        return .text(literal + "}")
    }

    /// A `text[]` parameter whose elements may be `NULL`.
    static func optionalTextArray(_ elements: [String?]) -> PostgresValue {
        let quoted = elements.map { element -> String in
            guard let element else { return "NULL" }
            guard case .text(let literal) = textArray([element]) else { return "NULL" }
            return String(literal.dropFirst().dropLast())
        }
        return .text("{" + quoted.joined(separator: ",") + "}")
    }

    /// A `bigint[]` parameter whose elements may be `NULL`. Cast it in SQL: `$1::bigint[]`.
    static func integerArray(_ elements: [Int64?]) -> PostgresValue {
        .text("{" + elements.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}")
    }
}

/// The rows a statement returned, in text format, copied out of libpq's result.
package struct PostgresRows: Sendable, Equatable {
    /// One array per row; `nil` is SQL `NULL`.
    package var rows: [[String?]]
    /// The number of rows an `INSERT`/`UPDATE`/`DELETE` changed (`PQcmdTuples`), 0 for anything else.
    var affectedRows: Int

    /// The first column of the first row.
    package var scalar: String? { rows.first?.first ?? nil }

    /// The second column by the first, of the rows whose first column is not `NULL` (a later row wins).
    var pairs: [String: String?] {
        var pairs: [String: String?] = [:]
        for row in rows where row.count >= 2 {
            if let key = row[0] { pairs[key] = row[1] }
        }
        return pairs
    }

    /// Decodes a `bytea` column in the server's hex output format (`\x0a1b...`).
    static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count >= 2, digits[0] == UInt8(ascii: "\\"), digits[1] == UInt8(ascii: "x"),
              digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((digits.count - 2) / 2)
        var index = 2
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

/// A `NOTIFY` received on a connection that `LISTEN`s.
package struct PostgresNotification: Sendable, Equatable {
    /// The channel name.
    var channel: String
    /// The payload (empty when none was given).
    var payload: String
    /// The server process that sent it.
    package var senderPID: Int32
}
