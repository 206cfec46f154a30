import DepotCore
import DepotServer
import DepotWire
import Foundation
import HTTP
import Server
import Testing

/// `ErrorMap`: every domain error's status, code, extra fields and header fields, from the one place that
/// decides them; the body is the wire `ErrorBody`.
@Suite struct ErrorMapTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let error: any AnswerableError & Sendable
        let status: Int
        let code: String
        var headers: [String: String] = [:]
        var testDescription: String { "\(error) → \(status) \(code)" }
    }

    static let rows: [Row] = [
        Row(error: RoutingFailure.notFound, status: 404, code: "not_found"),
        Row(error: RoutingFailure.methodNotAllowed(allow: "GET, HEAD"), status: 405, code: "method_not_allowed", headers: ["Allow": "GET, HEAD"]),
        Row(error: RoutingFailure.malformedPath, status: 400, code: "bad_request"),
        Row(error: RoutingFailure.unexpected("x"), status: 500, code: "internal_error"),
        Row(error: ProtocolError(.badRequest("m")), status: 400, code: "bad_request"),
        Row(error: ProtocolError(.uriTooLong), status: 414, code: "uri_too_long"),
        Row(error: ProtocolError(.headersTooLarge), status: 431, code: "headers_too_large"),
        Row(error: ProtocolError(.versionNotSupported), status: 505, code: "version_not_supported"),
        Row(error: ProtocolError(.notImplemented("gzip")), status: 501, code: "not_implemented"),
        Row(error: ProtocolError.malformedChunkedBody, status: 400, code: "bad_request"),
        Row(error: ProtocolError.bodyTooLarge(limit: 9), status: 413, code: "too_large"),
        Row(error: ProtocolError.bodyTooSlow, status: 408, code: "request_timeout"),
        Row(error: ProtocolError.overloaded(retryAfterSeconds: 2), status: 503, code: "unavailable", headers: ["Retry-After": "2"]),
        Row(error: CatalogFailure.notLoaded, status: 503, code: "catalog_unavailable"),
        Row(error: TokenRejection.missing, status: 401, code: "token_missing", headers: ["WWW-Authenticate": "Bearer"]),
        Row(error: TokenRejection.invalid, status: 401, code: "token_invalid", headers: ["WWW-Authenticate": "Bearer error=\"invalid_token\""]),
        Row(error: TokenRejection.expired, status: 401, code: "token_expired", headers: ["WWW-Authenticate": "Bearer error=\"invalid_token\""]),
        Row(error: TokenRejection.wrongPack, status: 403, code: "token_wrong_pack"),
        Row(error: TokenRejection.revoked, status: 403, code: "revoked"),
        Row(error: PackFailure.malformedURL, status: 400, code: "bad_request"),
        Row(error: PackFailure.noPack("p"), status: 404, code: "not_found"),
        Row(error: PackFailure.noLiveVersion(pack: "p"), status: 404, code: "not_found"),
        Row(error: PackFailure.noVersion(pack: "p", version: 2), status: 404, code: "not_found"),
        Row(error: PackFailure.noFile(pack: "p", version: 2, path: "a"), status: 404, code: "not_found"),
        Row(error: PackFailure.fileMissingOnDisk, status: 404, code: "not_found"),
        Row(error: PackFailure.cannotOpenMoreFiles, status: 503, code: "unavailable", headers: ["Retry-After": "1"]),
        Row(error: PackFailure.contentCorrupt, status: 500, code: "content_corrupt"),
        Row(error: ChunkPlan.Failure.badAvailable, status: 400, code: "bad_request"),
        Row(error: ChunkPlan.Failure.badHave, status: 400, code: "bad_request"),
        Row(error: PurchaseFailure.unsupportedMediaType, status: 415, code: "unsupported_media_type"),
        Row(error: PurchaseFailure.badRequest("why"), status: 400, code: "bad_request"),
        Row(error: PurchaseFailure.receiptInvalid("r"), status: 422, code: "receipt_invalid"),
        Row(error: PurchaseFailure.appleUnavailable(appleStatus: nil), status: 503, code: "apple_unavailable", headers: ["Retry-After": "5"]),
        Row(error: PurchaseFailure.verificationUnavailable, status: 503, code: "apple_unavailable", headers: ["Retry-After": "5"]),
        Row(error: PurchaseFailure.appleMisconfigured(appleStatus: 21004), status: 502, code: "apple_misconfigured"),
        Row(error: PurchaseFailure.catalogUnavailable, status: 503, code: "catalog_unavailable", headers: ["Retry-After": "5"]),
        Row(error: PurchaseFailure.ledgerUnavailable, status: 503, code: "ledger_unavailable", headers: ["Retry-After": "5"]),
        Row(error: NotificationFailure.badRequest("b"), status: 400, code: "bad_request"),
        Row(error: NotificationFailure.wrongBundle("w"), status: 400, code: "wrong_bundle"),
        Row(error: NotificationFailure.invalidSignature("d", check: "chain"), status: 401, code: "invalid_signature"),
        Row(error: NotificationFailure.invalidPassword, status: 401, code: "invalid_password"),
        Row(error: NotificationFailure.verificationUnavailable("v"), status: 503, code: "unavailable", headers: ["Retry-After": "5"]),
        Row(error: NotificationFailure.ledgerUnavailable, status: 503, code: "ledger_unavailable", headers: ["Retry-After": "5"]),
        Row(error: AdminFailure.unauthorized, status: 401, code: "unauthorized", headers: ["WWW-Authenticate": "Bearer"]),
        Row(error: AdminFailure.badPackID("x"), status: 400, code: "bad_request"),
        Row(error: AdminFailure.badVersion, status: 400, code: "bad_request"),
        Row(error: AdminFailure.malformedFilePath, status: 400, code: "bad_request"),
        Row(error: AdminFailure.refusedFilePath(".x"), status: 400, code: "bad_request"),
        Row(error: AdminFailure.badDigestField("d"), status: 400, code: "bad_request"),
        Row(error: AdminFailure.uploadTooLarge(limit: 9), status: 413, code: "too_large"),
        Row(error: AdminFailure.insufficientStorage(requiredBytes: 9, freeBytes: 1), status: 507, code: "insufficient_storage"),
        Row(error: AdminFailure.pathConflict("a"), status: 409, code: "conflict"),
        Row(error: AdminFailure.publishInProgress, status: 409, code: "conflict"),
        Row(error: AdminFailure.uploadsInFlight, status: 409, code: "conflict"),
        Row(error: AdminFailure.alreadyPublishing, status: 409, code: "conflict"),
        Row(error: AdminFailure.badPublishBody("b"), status: 400, code: "bad_request"),
        Row(error: AdminFailure.nothingUploaded(pack: "p", version: 1), status: 404, code: "not_found"),
        Row(error: AdminFailure.digestMismatch, status: 400, code: "digest_mismatch"),
        Row(error: AdminFailure.storage("s"), status: 500, code: "storage_error"),
        Row(error: PublishError.invalid("i"), status: 400, code: "bad_request"),
        Row(error: PublishError.versionExists(pack: "p", version: 1, newest: 1), status: 409, code: "version_exists"),
        Row(error: PublishError.productConflict("c"), status: 409, code: "conflict"),
        Row(error: PublishError.insufficientSpace(requiredBytes: 9, freeBytes: 1), status: 507, code: "insufficient_storage"),
        Row(error: PublishError.catalogInvalid("c"), status: 409, code: "catalog_invalid"),
        Row(error: PublishError.io("e"), status: 500, code: "storage_error"),
    ]

    @Test(arguments: rows)
    func everyErrorHasItsAnswer(_ row: Row) throws {
        let response = row.error.answer.response(.other)
        #expect(response.status == row.status)
        #expect(response.headers.first("content-type") == "application/json; charset=utf-8")
        #expect(response.headers.first("cache-control") == "no-store")
        for name in ["Allow", "WWW-Authenticate", "Retry-After"] {
            #expect(response.headers.first(name.lowercased()) == row.headers[name], "\(name)")
        }
        guard case .bytes(let bytes) = response.body else { Issue.record("no body"); return }
        let body = try WireJSON.decode(ErrorBody.self, from: bytes)
        #expect(body.error.code == row.code)
        #expect(!body.error.message.isEmpty)
    }

    /// The extra fields beside `error`, exactly as the spec names them, in Depot's layout.
    @Test func extraFieldsAreTyped() {
        func text(_ error: any AnswerableError) -> String {
            guard case .bytes(let bytes) = error.answer.response(.other).body else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(text(PurchaseFailure.receiptInvalid("Apple says 21003", appleStatus: 21003))
            == "{\"error\": {\"code\": \"receipt_invalid\", \"message\": \"The purchase could not be validated: Apple says 21003.\"}, \"appleStatus\": 21003}\n")
        #expect(text(PurchaseFailure.receiptInvalid("x", check: "oid")).hasSuffix("}, \"check\": \"oid\"}\n"))
        #expect(text(NotificationFailure.invalidSignature("d", check: "signature")).hasSuffix("}, \"check\": \"signature\"}\n"))
        #expect(text(AdminFailure.insufficientStorage(requiredBytes: 70, freeBytes: 3)).hasSuffix("}, \"requiredBytes\": 70, \"freeBytes\": 3}\n"))
        #expect(text(PurchaseFailure.appleUnavailable(appleStatus: 21005)).hasSuffix("}, \"appleStatus\": 21005}\n"))
        #expect(!text(PurchaseFailure.appleUnavailable(appleStatus: nil)).contains("appleStatus"))
    }

    /// The engine's protocol errors come through the responder in Depot's shape, counted as `error`.
    @Test func protocolErrorsTakeDepotsShape() throws {
        let response = ProtocolError.bodyTooLarge(limit: 9).answer.response(.error)
        #expect(response.route == "error")
        guard case .bytes(let bytes) = response.body else { Issue.record("no body"); return }
        #expect(String(decoding: bytes, as: UTF8.self)
            == "{\"error\": {\"code\": \"too_large\", \"message\": \"The request body is larger than 9 bytes.\"}}\n")
    }
}
