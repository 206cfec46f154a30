import DepotWire

/// A JSON document the simulated Server API writes: its answers and the payloads it signs, written
/// straight to bytes in the order the members are given (no `JSONSerialization`, whose `Any` trees and
/// `NSNumber`s were a large part of the store's CPU per answer in the benchmark, on the cores Depot runs on).
/// Strings are escaped as JSON requires (`JSONText`); `/` is not escaped, as Apple writes it.
package indirect enum SimulatedJSON: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case bool(Bool)
    case array([SimulatedJSON])
    /// Members in the order written; keys are not checked for uniqueness (the store never repeats one).
    case object([Member])

    /// One `"name": value` of an object.
    package struct Member: Sendable, Equatable {
        package var name: String
        package var value: SimulatedJSON

        /// `"name": value`.
        package init(_ name: String, _ value: SimulatedJSON) {
            self.name = name
            self.value = value
        }
    }

    /// The UTF-8 JSON text, compact (`{"a":1,"b":[true,"x"]}`).
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(to: &out)
        return out
    }

    /// Appends the compact JSON text to `out`.
    package func write(to out: inout [UInt8]) {
        switch self {
        case .string(let text):
            JSONText.append(text, to: &out)
        case .integer(let value):
            out.append(contentsOf: String(value).utf8)
        case .bool(let value):
            out.append(contentsOf: (value ? "true" : "false").utf8)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONText.append(member.name, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
