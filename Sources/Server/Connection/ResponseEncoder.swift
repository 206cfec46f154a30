/// Writes a response head onto the wire: status line, the application's fields and `Content-Length` (copied
/// as one block when the response was frozen), the response's `X-Request-ID` when it has one, then the engine's
/// `Server`, `Date` and `Connection: close`.
enum ResponseEncoder {
    static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    private static let connectionClose = Array("Connection: close\r\n".utf8)
    private static let requestIDPrefix = Array("X-Request-ID: ".utf8)

    static func appendHead(of response: Response, closing: Bool, environment: ConnectionEnvironment, to out: inout [UInt8]) {
        if let encoded = response.encodedHead {
            out.append(contentsOf: encoded)
        } else {
            response.appendHead(to: &out)
        }
        if let requestID = response.requestID {
            out.append(contentsOf: requestIDPrefix)
            out.append(contentsOf: requestID.utf8)
            out.append(0x0D); out.append(0x0A)
        }
        out.append(contentsOf: environment.serverLine)
        out.append(contentsOf: environment.dateLine)
        if closing { out.append(contentsOf: connectionClose) }
        out.append(0x0D); out.append(0x0A)
    }
}
