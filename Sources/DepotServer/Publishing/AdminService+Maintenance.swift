import DepotCore
import DepotWire
import Foundation
import Server
import Synchronization

/// The rest of the admin API (operations.md §1): the CLI's verbs over HTTP with the same rules and errors —
/// listings, retire and un-retire, prune, check, and discarding an upload that was never published. Everything
/// that touches the disk runs on the service's own queues, never on an event loop.
extension AdminService {
    /// `GET /admin/v1/products`: every product of `catalog/products.json`, live and retired.
    func products(_ request: RouteRequest) throws -> Handling {
        let publisher = self.publisher
        return .reply(.later { [inspecting] in
            let result: Result<Catalog, PublishError> = await inspecting.run {
                do throws(PublishError) { return .success(try publisher.loadCatalog()) } catch { return .failure(error) }
            }
            switch result {
            case .failure(let error): return error.answer.response(.adminProducts)
            case .success(let catalog):
                let products = catalog.products.map {
                    AdminProducts.Product(id: $0.id, type: $0.type.rawValue, title: $0.title, description: $0.description,
                                          pack: $0.pack, status: $0.status.rawValue)
                }
                return JSONAnswer.response(AdminProducts(products: products), .adminProducts)
            }
        })
    }

    /// `POST /admin/v1/products/{id}/retire` and `.../unretire`: idempotent; an unknown product is `404`.
    func setStatus(_ request: RouteRequest, retired: Bool) -> Handling {
        let id = request.parameter("id")
        let label: RouteLabel = retired ? .adminRetire : .adminUnretire
        let log = logger.with(requestID: request.requestID)
        return .reply(.later { [self] in
            let result: Result<Bool, PublishError>
            do throws(AdminFailure) {
                result = try await underPublishLock(retired ? "retire" : "unretire", log: log) { publisher throws(PublishError) in
                    if retired { try publisher.retire(productID: id) } else { try publisher.unretire(productID: id) }
                    return true
                }
            } catch {
                return error.answer.response(label)
            }
            if case .failure(let error) = result { return error.answer.response(label) }
            await reloadCatalog(log: log)
            log.info(.catalogChanged, "\(retired ? "retired" : "un-retired") \(id) by the admin API")
            return JSONAnswer.response(ProductStatusAnswer(id: id, status: retired ? "retired" : "live"), label)
        })
    }

    /// `GET /admin/v1/packs`: every pack on disk, its live version and each version's state.
    func packs(_ request: RouteRequest) -> Handling {
        let contentDirectory = publisher.paths.contentDirectory
        return .reply(.later { [inspecting] in
            let answer = await inspecting.run { Self.listing(contentDirectory: contentDirectory) }
            return JSONAnswer.response(answer, .adminPacks)
        })
    }

    static func listing(contentDirectory: String) -> AdminPacks {
        let content = ContentIndex.load(contentDirectory: contentDirectory, displayPrefix: contentDirectory, cache: ManifestCache())
        let packs = content.packs.values.sorted { $0.id < $1.id }.map { pack in
            AdminPacks.Pack(id: pack.id, live: pack.current, versions: pack.versions.values.sorted { $0.version < $1.version }.map {
                AdminPacks.Version(version: $0.version, files: $0.manifest.files.count, bytes: $0.manifest.downloadBytes,
                                   state: AdminPacks.State.of($0.version, live: pack.current), published: $0.manifest.published,
                                   chunking: $0.manifest.effectiveChunking)
            })
        }
        return AdminPacks(packs: packs)
    }

    /// `POST /admin/v1/prune` with `{"keep": N, "pack": ..., "dryRun": ...}`.
    func prune(_ request: RouteRequest) -> Handling {
        let log = logger.with(requestID: request.requestID)
        return .collectBody(limit: 64 * 1024) { [self] body in
            .later { [self] in
                let parsed: (keep: Int, pack: String?, dryRun: Bool)
                do throws(AdminFailure) { parsed = try Self.pruneRequest(body) } catch { return error.answer.response(.adminPrune) }
                let result: Result<[PrunedVersion], PublishError>
                do throws(AdminFailure) {
                    result = try await underPublishLock("prune", log: log) { publisher throws(PublishError) in
                        try publisher.prune(keep: parsed.keep, pack: parsed.pack, dryRun: parsed.dryRun)
                    }
                } catch {
                    return error.answer.response(.adminPrune)
                }
                switch result {
                case .failure(let error): return error.answer.response(.adminPrune)
                case .success(let removed):
                    if !parsed.dryRun && !removed.isEmpty {
                        await reloadCatalog(log: log)
                        log.info(.catalogChanged, "pruned " + removed.map { "\($0.pack)/\($0.version)" }.joined(separator: ", ") + " by the admin API")
                    }
                    let answer = PruneAnswer(removed: removed.map { PruneAnswer.Removed(pack: $0.pack, version: $0.version, bytes: $0.bytes) },
                                             dryRun: parsed.dryRun)
                    return JSONAnswer.response(answer, .adminPrune)
                }
            }
        }
    }

    static func pruneRequest(_ body: [UInt8]) throws(AdminFailure) -> (keep: Int, pack: String?, dryRun: Bool) {
        let shape = "The body must be {\"keep\": N (at least 1), \"pack\": \"<id>\" (optional), \"dryRun\": true or false (optional)}."
        guard let request = try? JSONDecoder().decode(PruneRequest.self, from: Data(body)) else { throw .badPruneBody(shape) }
        guard request.keep >= 1 else { throw .badPruneBody("`keep` must be at least 1.") }
        if let pack = request.pack, !Identifiers.isValidPackID(pack) { throw .badPruneBody("\"\(pack)\" is not a pack ID.") }
        return (request.keep, request.pack, request.dryRun ?? false)
    }

    /// `GET /admin/v1/check`: every problem of `catalog/` and `content/`, as `depot check` prints them.
    func check(_ request: RouteRequest) -> Handling {
        let paths = publisher.paths
        return .reply(.later { [inspecting] in
            let summary = await inspecting.run { DepotCheck.run(paths: paths) }
            let problems = summary.problems.map { CheckAnswer.Problem(file: $0.file, field: $0.field, message: $0.message) }
            return JSONAnswer.response(CheckAnswer(ok: problems.isEmpty, problems: problems), .adminCheck)
        })
    }

    /// `DELETE /admin/v1/packs/{pack}/{version}/upload`: `204` once the uploads of a never-published version are
    /// gone; `409` for a published version or while uploads or a publish of it are under way; `404` when there
    /// is nothing. Taken under the publish locks, like every change of `content/`.
    func deleteUpload(_ request: RouteRequest) throws -> Handling {
        let (pack, version) = try Self.packVersion(request)
        let key = "\(pack)/\(version)"
        // Held like a publish while the files go: no upload can start into them meanwhile.
        let busy: AdminFailure? = activity.withLock { state in
            if (state.inFlight[key] ?? 0) > 0 { return .uploadsInFlight }
            if state.publishing.contains(key) { return .alreadyPublishing }
            state.publishing.insert(key)
            return nil
        }
        if let busy { throw busy }
        let directory = uploadsDirectory + "/\(pack)/\(version)"
        let published = publisher.paths.contentDirectory + "/\(pack)/\(version)"
        let log = logger.with(requestID: request.requestID)
        return .reply(.later { [self] in
            defer { activity.withLock { _ = $0.publishing.remove(key) } }
            // Under the publish locks, like a publish: another host's publish of these uploads claims them under
            // the same locks, so it never takes a half-removed directory.
            let outcome: Result<AdminFailure?, PublishError>
            do throws(AdminFailure) {
                outcome = try await underPublishLock("discard of the uploads of \(key)", log: log) { publisher throws(PublishError) in
                    try publisher.withLock { () -> AdminFailure? in
                        if FileStatus.isDirectory(directory) {
                            DurableFiles.removeTree(directory)
                            return FileStatus.isDirectory(directory) ? .storage("Could not remove the uploads of \(key).") : nil
                        }
                        return FileStatus.isDirectory(published) ? .versionPublished(pack: pack, version: version)
                                                                 : .nothingUploaded(pack: pack, version: version)
                    }
                }
            } catch {
                return error.answer.response(.adminUploadDelete)
            }
            switch outcome {
            case .failure(let error): return error.answer.response(.adminUploadDelete)
            case .success(let refusal?): return refusal.answer.response(.adminUploadDelete)
            case .success(nil): break
            }
            log.info(.catalogChanged, "discarded the uploads of \(key) by the admin API")
            return Response(status: 204, route: RouteLabel.adminUploadDelete.rawValue)
        })
    }
}
