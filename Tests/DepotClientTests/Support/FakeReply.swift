import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the fake server answers: an HTTP response, or a failure before any response (offline).
enum FakeReply: Sendable {
    case response(status: Int, headers: [String: String], body: Data, url: URL? = nil)
    case failure(URLError.Code)
    /// No answer at all: the request hangs until the client cancels it. (Answering a request the client
    /// is cancelling races with the cancellation inside swift-corelibs-foundation.)
    case stall

    static func json(_ status: Int, _ text: String, headers: [String: String] = [:]) -> FakeReply {
        var all = headers
        all["Content-Type"] = "application/json; charset=utf-8"
        return .response(status: status, headers: all, body: Data(text.utf8))
    }

    static func error(_ status: Int, _ code: String, extra: String = "", headers: [String: String] = [:]) -> FakeReply {
        json(status, "{\"error\": {\"code\": \"\(code)\", \"message\": \"m\"}\(extra)}", headers: headers)
    }
}

/// A request as the fake server saw it.
struct RecordedRequest: Sendable {
    var method: String
    var url: URL
    var headers: [String: String]
    var body: Data?

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}
