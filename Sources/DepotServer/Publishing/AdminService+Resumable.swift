import DepotWire
import HTTP
import Platform
import Server
import Synchronization

/// Resumable uploads: `PUT` with `Content-Range` appends a piece, `GET`/`HEAD` on the same path says how much
/// arrived (`Upload-Offset`), so an upload cut by a network error or a restart continues where it stopped.
extension AdminService {
    /// Checks one piece (`Content-Range: bytes FIRST-LAST/TOTAL`) of a resumable upload (on `lookups`) and makes its sink.
    func resumableUpload(_ head: RequestHead, pack: String, version: Int, path: String, range: ContentRange) throws -> Handling {
        if let refusal = publisher.versionRefusal(pack: pack, version: version) { throw refusal }
        let expected = try Self.expectedDigest(head.fields)
        if range.total > Self.uploadLimit { throw AdminFailure.uploadTooLarge(limit: Self.uploadLimit) }
        let free = publisher.space.freeBytes(at: publisher.paths.contentDirectory)
        let reserve = publisher.reserveBytes()
        let remaining = range.total - range.first
        if free - remaining < reserve { throw AdminFailure.insufficientStorage(requiredBytes: remaining + reserve, freeBytes: free) }
        let key = "\(pack)/\(version)"
        if activity.withLock({ $0.publishing.contains(key) }) { throw AdminFailure.publishInProgress }
        let location = ResumableUpload(directory: uploadsDirectory + "/\(pack)/\(version)", relativePath: path)
        let file = key + "/" + path
        let sink = ResumableUploadSink(
            location: location, range: range, expectedSHA256: expected, space: publisher.space,
            volumePath: publisher.paths.contentDirectory, reserve: reserve,
            begin: { [self] in
                guard activity.withLock({ $0.resuming.insert(file).inserted }) else { return .resumableUploadBusy(path) }
                guard beginUpload(key) else {
                    activity.withLock { _ = $0.resuming.remove(file) }
                    return .publishInProgress
                }
                return nil
            },
            end: { [self] in
                endUpload(key)
                activity.withLock { _ = $0.resuming.remove(file) }
            })
        return .streamBody(limit: range.length, sink: sink)
    }

    /// `GET`/`HEAD /admin/v1/packs/{pack}/{version}/files/{path}`: what the server holds of an upload (the
    /// ``UploadStatus``, and `Upload-Offset`: where the next piece starts); nothing uploaded yet is
    /// `0` received of size `0`, not complete. The URL is checked here; the version's directory and `current`
    /// (``Publisher/versionRefusal(pack:version:)``) and the upload are read on `lookups`, off the event loop.
    func uploadStatus(_ request: RouteRequest) throws -> Handling {
        let (pack, version, path) = try Self.uploadTarget(request)
        let location = ResumableUpload(directory: uploadsDirectory + "/\(pack)/\(version)", relativePath: path)
        return .reply(.later { [self] in
            let found: Result<UploadStatus?, PublishError> = await lookups.run { [publisher] in
                if let refusal = publisher.versionRefusal(pack: pack, version: version) { return .failure(refusal) }
                return .success(location.status())
            }
            switch found {
            case .failure(let refusal): return refusal.answer.response(.adminUploadStatus)
            case .success(let found):
                let status = found ?? UploadStatus(path: path, receivedBytes: 0, size: 0, complete: false)
                return JSONAnswer.response(status: 200, status, .adminUploadStatus, headers: ["Upload-Offset": String(status.receivedBytes)])
            }
        })
    }
}
