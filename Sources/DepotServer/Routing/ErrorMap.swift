package import AppStore
package import DepotCore
import DepotWire
import HTTP
package import Server

/// A domain error with an HTTP answer. Every conformance is in this file: it is the one place where an error
/// becomes a status, a code, a message, extra body fields and header fields.
package protocol AnswerableError: Error {
    var answer: APIError { get }
}

/// Builds error answers: the status, the body's code and message, and its extras.
enum ErrorMap {
    static func answer(_ status: Int, _ code: String, _ message: String, appleStatus: Int? = nil, appleErrorCode: Int? = nil,
                       check: String? = nil,
                       requiredBytes: Int64? = nil, freeBytes: Int64? = nil, retryAfter: Int? = nil,
                       challenge: String? = nil, allow: String? = nil) -> APIError {
        var headers = HTTPFields()
        // RFC 9110 §15.5.6: a 405 lists the methods the resource has.
        if let allow { headers.append("Allow", allow) }
        // RFC 9110 §10.2.3.
        if let retryAfter { headers.append("Retry-After", String(retryAfter)) }
        // RFC 9110 §11.6.1: a 401 carries a challenge; RFC 6750 §3 gives its form for bearer tokens.
        if let challenge { headers.append("WWW-Authenticate", challenge) }
        return APIError(status: status, body: ErrorBody(code: code, message: message, appleStatus: appleStatus,
                                                        appleErrorCode: appleErrorCode, check: check,
                                                        requiredBytes: requiredBytes, freeBytes: freeBytes),
                        headers: headers)
    }

    /// How long a client waits before asking again when Apple, the ledger or the catalog is not ready.
    static let retrySeconds = 5
}

extension RoutingFailure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .notFound: ErrorMap.answer(404, "not_found", "No such resource.")
        case .methodNotAllowed(let allow): ErrorMap.answer(405, "method_not_allowed", "Allowed methods: \(allow).", allow: allow)
        case .malformedPath: ErrorMap.answer(400, "bad_request", "Malformed request path.")
        case .unexpected: ErrorMap.answer(500, "internal_error", "The request could not be answered.")
        }
    }
}

/// The engine's own refusals (spec §4, §7): its status and sentence, Depot's code.
extension ProtocolError: AnswerableError {
    package var answer: APIError {
        let code = switch kind {
        case .malformed: "bad_request"
        case .requestLineTooLong: "uri_too_long"
        case .headersTooLarge: "headers_too_large"
        case .versionNotSupported: "version_not_supported"
        case .notImplemented: "not_implemented"
        case .bodyTooLarge: "too_large"
        case .bodyTooSlow: "request_timeout"
        case .overloaded: "unavailable"
        }
        return ErrorMap.answer(status, code, message, retryAfter: retryAfterSeconds)
    }
}

extension CatalogFailure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .notLoaded: ErrorMap.answer(503, "catalog_unavailable", "The catalog has not loaded; see the server log.")
        }
    }
}

extension TokenRejection: AnswerableError {
    package var answer: APIError {
        let invalid = "Bearer error=\"invalid_token\""
        return switch self {
        case .missing: ErrorMap.answer(401, "token_missing", "A download token is required (Authorization: Bearer or ?token=).",
                                       challenge: "Bearer")
        case .invalid: ErrorMap.answer(401, "token_invalid", "The download token is malformed or its signature does not match.",
                                       challenge: invalid)
        case .expired: ErrorMap.answer(401, "token_expired",
                                       "The download token has expired: validate the purchase again for a fresh token; the download can resume.",
                                       challenge: invalid)
        case .wrongPack: ErrorMap.answer(403, "token_wrong_pack", "The download token is for another pack.")
        case .revoked: ErrorMap.answer(403, "revoked", "The purchase behind this token was refunded or revoked.")
        case .ledgerStale:
            ErrorMap.answer(503, "ledger_unavailable", "The purchase ledger has been unreachable too long to check this token; try again.",
                            retryAfter: ErrorMap.retrySeconds)
        }
    }
}

extension PackFailure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .malformedURL: ErrorMap.answer(400, "bad_request", "Malformed pack URL.")
        case .noPack(let pack): ErrorMap.answer(404, "not_found", "No pack \"\(pack)\".")
        case .noLiveVersion(let pack): ErrorMap.answer(404, "not_found", "Pack \"\(pack)\" has no live version.")
        case .noStagedVersion(let pack): ErrorMap.answer(404, "not_found", "Pack \"\(pack)\" has no staged version (none newer than the live one).")
        case .badFromVersion:
            ErrorMap.answer(400, "bad_request", "`from` must be a version number: a positive decimal integer without sign or leading zeros.")
        case .noVersion(let pack, let version): ErrorMap.answer(404, "not_found", "Pack \"\(pack)\" has no version \(version).")
        case .noFile(let pack, let version, let path):
            ErrorMap.answer(404, "not_found", "Version \(version) of pack \"\(pack)\" has no file \"\(path)\".")
        case .fileMissingOnDisk: ErrorMap.answer(404, "not_found", "The file is missing on this server.")
        case .cannotOpenMoreFiles:
            ErrorMap.answer(503, "unavailable", "The server cannot open more files right now; try again.", retryAfter: 1)
        case .contentCorrupt: ErrorMap.answer(500, "content_corrupt", "The file on disk does not match its manifest.")
        }
    }
}

extension EdgeFailure: AnswerableError {
    var answer: APIError {
        switch self {
        case .missingOriginalURI:
            ErrorMap.answer(400, "bad_request", "X-Original-URI must name the request to authorize (one origin-form target).")
        case .notAPackFile: ErrorMap.answer(400, "bad_request", "X-Original-URI is not a pack file URL.")
        case .secretRequired:
            ErrorMap.answer(403, "forbidden", "The origin route is for the edge cache: it needs the edge secret (X-Depot-Edge-Secret).")
        case .answeredByTheFileURL(let status):
            ErrorMap.answer(status, status == 416 ? "range_not_satisfiable" : "precondition_failed",
                            "The file URL answers this request itself.")
        }
    }
}

extension ChunkPlan.Failure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .badAvailable: ErrorMap.answer(400, "bad_request", "`available` must be a non-negative integer (bytes free on the device).")
        case .badHave: ErrorMap.answer(400, "bad_request", "`have` must be a non-negative integer on a chunk boundary, at most downloadBytes.")
        }
    }
}

extension PurchaseFailure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .unsupportedMediaType: ErrorMap.answer(415, "unsupported_media_type", "The body must be application/json in UTF-8.")
        case .badRequest(let why): ErrorMap.answer(400, "bad_request", why)
        case .receiptInvalid(let why, let status, let check):
            ErrorMap.answer(422, "receipt_invalid", "The purchase could not be validated: \(why).", appleStatus: status, check: check)
        case .appleUnavailable(let status):
            ErrorMap.answer(503, "apple_unavailable", "Apple cannot validate receipts right now; keep the transaction unfinished and try again.",
                            appleStatus: status, retryAfter: ErrorMap.retrySeconds)
        case .verificationUnavailable:
            ErrorMap.answer(503, "apple_unavailable", "Signed transactions cannot be verified right now; try again.",
                            retryAfter: ErrorMap.retrySeconds)
        case .appleMisconfigured(let status):
            ErrorMap.answer(502, "apple_misconfigured", "The server's App Store configuration was refused by Apple.", appleStatus: status)
        case .catalogUnavailable:
            ErrorMap.answer(503, "catalog_unavailable", "The catalog has not loaded.", retryAfter: ErrorMap.retrySeconds)
        case .ledgerUnavailable:
            ErrorMap.answer(503, "ledger_unavailable", "The purchase could not be recorded; try again.", retryAfter: ErrorMap.retrySeconds)
        case .serverAPI(let failure): failure.answer
        case .historyUnavailable:
            ErrorMap.answer(400, "history_unavailable",
                            "Restoring from one transaction needs the App Store Server API, and this server has no In-App Purchase key.")
        }
    }
}

/// The App Store Server API's failures (spec app-store-server-api §2): a signed item that failed its check,
/// or a transaction neither environment knows, is `422 receipt_invalid` (with `check`); anything retryable
/// after the one retry is `503 apple_unavailable` with Apple's `Retry-After`; a refused key or another
/// bundle is `502 apple_misconfigured`.
extension ServerAPIFailure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .invalid(let check, let code, let reason):
            ErrorMap.answer(422, "receipt_invalid", "The purchase could not be validated: \(reason).", appleErrorCode: code,
                            check: check?.rawValue)
        case .unavailable(let retryAfter, let code, _):
            ErrorMap.answer(503, "apple_unavailable", "The App Store cannot answer right now; keep the transaction unfinished and try again.",
                            appleErrorCode: code, retryAfter: retryAfter)
        case .misconfigured(_, let code, _):
            ErrorMap.answer(502, "apple_misconfigured", "The server's App Store Server API configuration was refused by Apple.",
                            appleErrorCode: code)
        }
    }
}

extension NotificationFailure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .badRequest(let why): ErrorMap.answer(400, "bad_request", why)
        case .wrongBundle(let why): ErrorMap.answer(400, "wrong_bundle", why)
        case .invalidSignature(let detail, let check):
            ErrorMap.answer(401, "invalid_signature", "The notification's signature does not verify: \(detail)", check: check)
        case .invalidPassword: ErrorMap.answer(401, "invalid_password", "The notification's password does not match the shared secret.")
        case .verificationUnavailable(let detail):
            ErrorMap.answer(503, "unavailable", "The notification cannot be verified right now: \(detail)", retryAfter: ErrorMap.retrySeconds)
        case .ledgerUnavailable:
            ErrorMap.answer(503, "ledger_unavailable", "The notification could not be recorded; Apple will retry.",
                            retryAfter: ErrorMap.retrySeconds)
        }
    }
}

extension AdminFailure: AnswerableError {
    package var answer: APIError {
        switch self {
        case .unauthorized:
            ErrorMap.answer(401, "unauthorized", "A valid admin token is required (Authorization: Bearer).", challenge: "Bearer")
        case .badPackID(let pack): ErrorMap.answer(400, "bad_request", "\"\(pack)\" is not a pack ID.")
        case .badVersion: ErrorMap.answer(400, "bad_request", "The version must be a positive integer.")
        case .malformedFilePath: ErrorMap.answer(400, "bad_request", "Malformed file path.")
        case .refusedFilePath(let path): ErrorMap.answer(400, "bad_request", "\"\(path)\" cannot be a pack file path.")
        case .badDigestField(let why): ErrorMap.answer(400, "bad_request", why)
        case .uploadTooLarge(let limit): ErrorMap.answer(413, "too_large", "An upload may be at most \(limit) bytes.")
        case .insufficientStorage(let required, let free):
            ErrorMap.answer(507, "insufficient_storage", "The content volume would keep less than its reserve free.",
                            requiredBytes: required, freeBytes: free)
        case .pathConflict(let path):
            ErrorMap.answer(409, "conflict", "\"\(path)\" clashes with another file of this upload (a file cannot also be a directory).")
        case .publishInProgress:
            ErrorMap.answer(409, "conflict", "A publish of this version is in progress; upload again once it has finished.")
        case .uploadsInFlight:
            ErrorMap.answer(409, "conflict", "Uploads into this version are still in progress; publish once they have finished.")
        case .alreadyPublishing: ErrorMap.answer(409, "conflict", "This version is being published already.")
        case .badPublishBody(let why): ErrorMap.answer(400, "bad_request", why)
        case .nothingUploaded(let pack, let version):
            ErrorMap.answer(404, "not_found", "Nothing was uploaded for pack \(pack) version \(version).")
        case .digestMismatch:
            ErrorMap.answer(400, "digest_mismatch", "The uploaded bytes do not match the digest that was sent; nothing was kept.")
        case .badContentRange(let why): ErrorMap.answer(400, "bad_request", why)
        case .uploadOffsetMismatch(let received):
            ErrorMap.answer(409, "upload_offset_mismatch", "The server holds \(received) bytes of this file; send the piece that starts there.")
                .adding("Upload-Offset", String(received))
        case .resumableUploadBusy(let path):
            ErrorMap.answer(409, "conflict", "Another piece of \"\(path)\" is still arriving; ask for the upload's offset and continue from it.")
        case .storage(let why): ErrorMap.answer(500, "storage_error", why)
        case .versionPublished(let pack, let version):
            ErrorMap.answer(409, "conflict", "Version \(version) of pack \(pack) is published; published versions are only removed by pruning.")
        case .badPruneBody(let why): ErrorMap.answer(400, "bad_request", why)
        case .publishLockUnavailable:
            ErrorMap.answer(503, "ledger_unavailable", "The shared ledger, which holds the publish lock, cannot be reached; publish again later.",
                            retryAfter: ErrorMap.retrySeconds)
        }
    }
}

extension SupportFailure: AnswerableError {
    var answer: APIError {
        switch self {
        case .badQuery(let why): ErrorMap.answer(400, "bad_request", why)
        case .badCursor: ErrorMap.answer(400, "bad_request", "`after` is not a cursor from a page of purchases; start again without it.")
        case .cursorWithoutAccount: ErrorMap.answer(400, "bad_request", "`after` pages through an account's purchases; use it with `account`.")
        case .unknownPurchase(let id): ErrorMap.answer(404, "not_found", "No purchase with original transaction ID \"\(id)\" in the ledger.")
        case .ledgerUnavailable:
            ErrorMap.answer(503, "ledger_unavailable", "The ledger cannot be reached; try again later.", retryAfter: ErrorMap.retrySeconds)
        }
    }
}

extension ConsoleFailure: AnswerableError {
    var answer: APIError {
        switch self {
        case .signInThrottled(let wait):
            ErrorMap.answer(429, "too_many_attempts", "Too many wrong admin tokens from this address; try again in \(wait) s.", retryAfter: wait)
        case .wrongAdminToken: ErrorMap.answer(401, "unauthorized", "That is not the admin token.", challenge: "Bearer")
        case .badSignInBody: ErrorMap.answer(400, "bad_request", "Sign in with the JSON body {\"token\": \"<admin token>\"}.")
        case .notSignedIn: ErrorMap.answer(401, "unauthorized", "Not signed in (or the session has ended).", challenge: "Bearer")
        case .csrfTokenInvalid:
            ErrorMap.answer(403, "csrf_token_invalid", "A state-changing console request needs the session's X-CSRF-Token.")
        case .crossOrigin: ErrorMap.answer(403, "cross_origin", "The console refuses requests sent by a page of another origin.")
        case .noSuchAsset: ErrorMap.answer(404, "not_found", "No such console file.")
        }
    }
}

extension PublishError: AnswerableError {
    package var answer: APIError {
        switch self {
        case .invalid(let why): ErrorMap.answer(400, "bad_request", why)
        case .versionExists: ErrorMap.answer(409, "version_exists", description)
        case .productConflict(let why): ErrorMap.answer(409, "conflict", why)
        case .insufficientSpace(let required, let free): AdminFailure.insufficientStorage(requiredBytes: required, freeBytes: free).answer
        case .catalogInvalid(let why): ErrorMap.answer(409, "catalog_invalid", "The catalog on disk is not valid; fix it first: \(why)")
        case .io(let why): ErrorMap.answer(500, "storage_error", why)
        case .noSuchVersion: ErrorMap.answer(404, "not_found", description.prefix(1).uppercased() + description.dropFirst() + ".")
        case .versionRefused(let why): ErrorMap.answer(409, "conflict", why.prefix(1).uppercased() + why.dropFirst() + "; nothing was changed.")
        case .unknownProduct(let id): ErrorMap.answer(404, "not_found", "No product \"\(id)\" in the catalog.")
        case .unknownPack(let id): ErrorMap.answer(404, "not_found", "No pack \"\(id)\" in the content directory.")
        }
    }
}
