import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one chunk request produced.
enum ChunkAnswer: Sendable {
    /// The chunk's bytes, SHA-256 verified.
    case bytes(Data)
    /// The file is not the one the manifest describes any more (`200` to `If-Range`, `412`, `416`).
    case changed
    /// `404`: the version may have been pruned.
    case gone
}

extension PackDownloader {
    /// `GET` the manifest (redirects followed), validated: pack ID, safe paths, chunk tiling.
    func fetchManifest(path: String? = nil) async throws -> DownloadManifest {
        let path = path ?? manifestPath
        let answer = try await authorized { token in
            var request = try transport.request(path, token: token)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            return request
        }
        guard answer.status == 200 else { throw transport.error(for: answer) }
        let manifest: DownloadManifest
        do {
            manifest = try JSONDecoder().decode(DownloadManifest.self, from: answer.body)
        } catch {
            throw DepotClientError.invalidResponse("manifest: \(error)")
        }
        guard manifest.pack == pack else {
            throw DepotClientError.invalidResponse("manifest is for pack \(manifest.pack), not \(pack)")
        }
        return try manifest.validated(reserved: PackDownloadOptions.journalFileName)
    }

    /// Fetches chunk `index` of `file`: exactly its bytes, verified, fetched again when they do not match.
    func fetchChunk(_ file: DownloadManifest.File, index: Int) async throws -> ChunkAnswer {
        let chunk = file.chunks[index]
        var failures = 0
        while true {
            let answer = try await authorized { token in
                var request = try transport.request(file.url, token: token)
                // RFC 9110 §14.2: one range, exactly this chunk: [offset, offset + length - 1].
                request.setValue("bytes=\(chunk.offset)-\(chunk.lastByte)", forHTTPHeaderField: "Range")
                // RFC 9110 §13.1.5: If-Range with the strong ETag: a changed file comes back whole (200)
                // instead of a part of the new bytes being spliced into the old ones.
                request.setValue(file.etag, forHTTPHeaderField: "If-Range")
                // Spec §4.4: pack files are never compressed; do not let the session negotiate it.
                request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
                return request
            }
            let body: Data
            switch answer.status {
            case 206:
                // RFC 9110 §14.4: the Content-Range of a 206 names the part sent and the full length.
                if let field = answer.field("Content-Range") {
                    guard let range = ContentRange(field) else {
                        throw DepotClientError.invalidResponse("Content-Range \(field)")
                    }
                    if range.completeLength != nil, range.completeLength != file.size { return .changed }
                    guard range.first == chunk.offset, range.last == chunk.lastByte else {
                        throw DepotClientError.invalidResponse("asked for bytes \(chunk.offset)-\(chunk.lastByte), got \(field)")
                    }
                }
                body = answer.body
            case 200:
                // RFC 9110 §13.1.5: If-Range failed, the representation changed. (A server that merely
                // ignores Range sends the same ETag and the whole file: take the chunk out of it.)
                guard answer.field("ETag") == file.etag, answer.body.count == Int(file.size) else { return .changed }
                let start = answer.body.startIndex + Int(chunk.offset)
                body = answer.body.subdata(in: start..<start + Int(chunk.length))
            case 404:
                return .gone
            case 412, 416:
                return .changed
            default:
                throw transport.error(for: answer)
            }
            if body.count == Int(chunk.length), try await Self.matches(body, sha256: chunk.sha256, with: options.hasher) {
                return .bytes(body)
            }
            failures += 1
            emit(.chunkRejected(path: file.path, chunk: index))
            if failures >= options.chunkAttempts {
                throw DepotClientError.chunkCorrupted(path: file.path, chunk: index)
            }
        }
    }

    /// Sends the request made with the current token; on `401 token_expired` renews the token through the
    /// caller's closure and sends again (spec §4.3: the ETag is unchanged, so the download resumes).
    func authorized(_ make: (String) throws -> URLRequest) async throws -> HTTPAnswer {
        var renewals = 0
        while true {
            let sent = token
            let answer = try await transport.send(try make(sent))
            guard answer.status == 401, ServerErrorBody(answer.body).code == "token_expired" else { return answer }
            // Another chunk in flight renewed the token meanwhile: send again with it.
            if token != sent { continue }
            guard let renewToken, renewals < options.tokenRenewals else { throw DepotClientError.tokenExpired }
            renewals += 1
            // Chunks in flight share one renewal (one receipt validation, not one per chunk).
            if let pending = renewal {
                _ = try await pending.value
                continue
            }
            let task = Task { try await renewToken() }
            renewal = task
            defer { renewal = nil }
            token = try await task.value
            emit(.tokenRenewed)
        }
    }

    /// Whether the SHA-256 of `data` (through the injected hasher) is `sha256` (hex), hashed off the actor (chunks in
    /// flight hash in parallel).
    nonisolated static func matches(_ data: Data, sha256: String, with hasher: any ChunkHasher) async throws -> Bool {
        try hashMatches(data, sha256: sha256, with: hasher)
    }

    /// Whether the SHA-256 of `data` (through the injected hasher) is `sha256` (hex, either case), compared as bytes.
    nonisolated static func hashMatches(_ data: Data, sha256: String, with hasher: any ChunkHasher) throws -> Bool {
        do {
            return try hasher.sha256(data).matchesHex(sha256)
        } catch let error as DepotClientError {
            throw error
        } catch {
            throw DepotClientError.hashUnavailable("\(error)")
        }
    }

    /// For each chunk of `indices`, whether `body` (bytes of the file from `bodyStart` on) holds all of it with its
    /// SHA-256: the whole run checked in one trip off the actor, not two hops per chunk.
    nonisolated static func verify(_ indices: Range<Int>, of chunks: [DownloadManifest.Chunk], in body: Data, from bodyStart: Int64,
                                   with hasher: any ChunkHasher) async throws -> [Bool] {
        try indices.map { index in
            let chunk = chunks[index]
            let from = body.startIndex + Int(chunk.offset - bodyStart)
            let to = from + Int(chunk.length)
            guard from >= body.startIndex, to <= body.endIndex else { return false }
            return try hashMatches(body[from..<to], sha256: chunk.sha256, with: hasher)
        }
    }
}

/// A `Content-Range: bytes first-last/complete` field (RFC 9110 §14.4); `*` for an unknown length.
package struct ContentRange: Equatable {
    var first: Int64
    var last: Int64
    var completeLength: Int64?

    /// A range with its bounds and the complete length (nil: unknown).
    package init(first: Int64, last: Int64, completeLength: Int64?) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    /// Parses a field; nil when it is not a satisfied byte range.
    package init?(_ field: String) {
        let text = field.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last else { return nil }
        self.first = first
        self.last = last
        if halves[1] == "*" {
            completeLength = nil
        } else {
            guard let length = Int64(halves[1]), length > last else { return nil }
            completeLength = length
        }
    }
}
