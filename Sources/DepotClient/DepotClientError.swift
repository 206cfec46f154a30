import DepotWire
public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything that can go wrong talking to a Depot server or downloading a pack.
///
/// Server answers are mapped to these cases in one place (``DepotClientError/init(status:body:retryAfter:now:)``)
/// from the spec's error body `{"error": {"code": ..., "message": ...}, ...extra fields}`.
public enum DepotClientError: Error, Sendable, CustomStringConvertible {
    /// `503`: the server (or Apple behind it) is unavailable. Keep the StoreKit transaction unfinished and
    /// try again, after `after` seconds when the server sent `Retry-After`.
    case retryLater(after: TimeInterval?)
    /// `422 receipt_invalid`: Apple's status (`appleStatus`) or the failed JWS check (`check`) when given.
    case invalidReceipt(appleStatus: Int?, check: String?)
    /// `400`: the server could not read the request.
    case badRequest(code: String, message: String)
    /// `401 token_missing`: no download token reached the server.
    case tokenMissing
    /// `401 token_expired` with no way (or no more attempts) to renew the token.
    case tokenExpired
    /// `401 token_invalid`: malformed token or bad signature.
    case tokenInvalid
    /// `403 token_wrong_pack`: the token was issued for another pack.
    case tokenWrongPack
    /// `403 revoked`: the purchase was refunded or revoked.
    case revoked
    /// `404`: no such pack, version or file.
    case notFound(code: String?, message: String?)
    /// Any other error status.
    case server(status: Int, code: String?, message: String?)
    /// The request never got an HTTP answer (offline, timeout, connection refused...).
    case transport(any Error)
    /// The answer did not have the shape the spec promises.
    case invalidResponse(String)
    /// Not enough free space to continue: `required` bytes of free space are needed (the next chunk plus the
    /// reserve), `available` are free. Free space and call `start()` again; the download resumes.
    case insufficientSpace(required: Int64, available: Int64)
    /// The manifest names a path that could escape the destination (`..`, absolute, backslash, NUL...).
    case unsafePath(String)
    /// A chunk kept failing its SHA-256 check.
    case chunkCorrupted(path: String, chunk: Int)
    /// A file kept changing under the download (ETag changed too many times).
    case contentChanged(path: String)
    /// Reading or writing the destination failed.
    case fileSystem(path: String, underlying: any Error)
    /// SHA-256 is not available (the default hasher could not load libcrypto).
    case hashUnavailable(String)
    /// The download was cancelled; its partial files are gone.
    case cancelled

    public var description: String {
        switch self {
        case .retryLater(let after):
            return "server unavailable, retry later" + (after.map { " (after \(Int($0)) s)" } ?? "")
        case .invalidReceipt(let status, let check):
            var text = "receipt invalid"
            if let status { text += " (Apple status \(status))" }
            if let check { text += " (check \(check))" }
            return text
        case .badRequest(let code, let message): return "bad request \(code): \(message)"
        case .tokenMissing: return "download token missing"
        case .tokenExpired: return "download token expired"
        case .tokenInvalid: return "download token invalid"
        case .tokenWrongPack: return "download token is for another pack"
        case .revoked: return "purchase revoked"
        case .notFound(let code, let message): return "not found" + Self.detail(code, message)
        case .server(let status, let code, let message): return "server error \(status)" + Self.detail(code, message)
        case .transport(let error): return "network error: \(Self.describe(error))"
        case .invalidResponse(let why): return "invalid response: \(why)"
        case .insufficientSpace(let required, let available):
            return "insufficient space: \(required) bytes needed, \(available) available"
        case .unsafePath(let path): return "unsafe path in manifest: \(path)"
        case .chunkCorrupted(let path, let chunk): return "chunk \(chunk) of \(path) failed its SHA-256 check"
        case .contentChanged(let path): return "\(path) kept changing during the download"
        case .fileSystem(let path, let error): return "file error at \(path): \(error.localizedDescription)"
        case .hashUnavailable(let why): return "SHA-256 unavailable: \(why)"
        case .cancelled: return "download cancelled"
        }
    }

    /// What a network failure was, in words: the exchanger's `LocalizedError` text (an `HTTPExchanger` that says
    /// "connection refused to HOST:PORT"), Foundation's sentence for its own errors, with the URL when known.
    static func describe(_ error: any Error) -> String {
        if let urlError = error as? URLError {
            let url = urlError.failingURL.map { " (\($0.absoluteString))" } ?? ""
            return urlError.localizedDescription + url
        }
        return error.localizedDescription
    }

    private static func detail(_ code: String?, _ message: String?) -> String {
        switch (code, message) {
        case let (code?, message?): return " \(code): \(message)"
        case let (code?, nil): return " \(code)"
        case let (nil, message?): return ": \(message)"
        default: return ""
        }
    }
}

extension DepotClientError {
    /// Maps an error answer of the server to a case: the one place where status and code become meaning.
    ///
    /// - Parameters:
    ///   - status: the HTTP status (not 2xx/304).
    ///   - body: the response body, ideally the spec's error JSON.
    ///   - retryAfter: the `Retry-After` field, if any.
    ///   - now: wall-clock time, to turn an HTTP-date `Retry-After` into seconds.
    package init(status: Int, body: Data, retryAfter: String?, now: Date) {
        let error = ServerErrorBody(body)
        switch (status, error.code) {
        case (503, _):
            self = .retryLater(after: retryAfter.flatMap { RetryAfter.seconds($0, now: now) })
        case (422, _):
            self = .invalidReceipt(appleStatus: error.appleStatus, check: error.check)
        case (400, _):
            self = .badRequest(code: error.code ?? "bad_request", message: error.message ?? "")
        case (401, "token_expired"): self = .tokenExpired
        case (401, "token_invalid"): self = .tokenInvalid
        case (401, "token_missing"): self = .tokenMissing
        case (403, "token_wrong_pack"): self = .tokenWrongPack
        case (403, "revoked"): self = .revoked
        case (404, _): self = .notFound(code: error.code, message: error.message)
        default: self = .server(status: status, code: error.code, message: error.message)
        }
    }
}

/// What the client reads of an error answer: the wire ``ErrorBody`` when the body is one, nothing otherwise
/// (a proxy's HTML page, say).
struct ServerErrorBody {
    var code: String?
    var message: String?
    var appleStatus: Int?
    var check: String?

    init(_ data: Data) {
        guard let body = try? JSONDecoder().decode(ErrorBody.self, from: data) else { return }
        code = body.error.code
        message = body.error.message
        appleStatus = body.appleStatus
        check = body.check
    }
}
