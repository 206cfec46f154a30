/// A protocol error the engine answers itself (a request it cannot parse, a body over its limit), to be sent in
/// Depot's error shape.
struct ProtocolFailure: Error, Sendable {
    let status: Int
    let code: String
    let message: String
}
