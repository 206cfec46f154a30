public import DepotWire
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The client of a Depot server: product lists with an offline cache, purchase validation, pack downloads.
///
/// Depends on Foundation only (FoundationNetworking on Linux) and builds for iOS, macOS and Linux.
///
/// ```swift
/// let depot = DepotClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
///
/// // 1. What is on sale (cached on disk, revalidated with If-None-Match / If-Modified-Since).
/// let ids = try await depot.productIDs()          // ids.list, ids.source
///
/// // 2. After a StoreKit purchase: validate on the server, get download tokens (receipt bytes or base64 text).
/// let unlocked = try await depot.unlock(receipt: receiptData, account: userID)
/// // On DepotClientError.retryLater: keep the transaction unfinished and try again later.
///
/// // 3. Download the pack, resumable across launches.
/// guard let entitlement = unlocked.entitlement(forPack: "level2") else { return }
/// let downloader = depot.downloader(for: entitlement, to: packsDirectory.appendingPathComponent("level2"),
///                                   renewToken: { try await depot.unlock(receipt: receiptData).token(forPack: "level2") })
/// for try await event in downloader.download() { print(event) }   // ends once every file is verified
/// ```
public struct DepotClient: Sendable {
    /// The server, e.g. `http://127.0.0.1:8080`; paths such as `/v1/receipts` are resolved against it.
    public let baseURL: URL
    /// The session used for every request.
    public let session: URLSession
    /// Where product lists are cached; nil disables the cache.
    public let cacheDirectory: URL?
    /// Wall and monotonic clocks.
    public let clock: DepotClock

    let transport: DepotTransport
    /// The product-list cache in ``cacheDirectory``, with the file-work queue all copies of this client share
    /// (``ProductListCache`` says why one per client).
    let productListCache: ProductListCache?

    /// A client for the server at `baseURL`.
    ///
    /// - Parameters:
    ///   - session: any session; the client sets `reloadIgnoringLocalCacheData` on its requests and does
    ///     its own conditional requests.
    ///   - cacheDirectory: product-list cache (one file per list and server); defaults to
    ///     ``defaultCacheDirectory``.
    ///   - clock: injectable time for tests.
    ///   - exchanger: sends the requests; defaults to `session`.
    public init(baseURL: URL, session: URLSession = .shared, cacheDirectory: URL? = DepotClient.defaultCacheDirectory,
                clock: DepotClock = .system, exchanger: (any HTTPExchanger)? = nil) {
        self.init(baseURL: baseURL, session: session, cacheDirectory: cacheDirectory, cacheFiles: .system, clock: clock,
                  exchanger: exchanger)
    }

    /// A client whose product-list cache does its file work with `cacheFiles` (on the cache's queue, as always).
    package init(baseURL: URL, session: URLSession, cacheDirectory: URL?, cacheFiles: ProductListCache.Files,
                 clock: DepotClock, exchanger: (any HTTPExchanger)?) {
        self.baseURL = baseURL
        self.session = session
        self.cacheDirectory = cacheDirectory
        productListCache = cacheDirectory.map { ProductListCache(directory: $0, files: cacheFiles) }
        self.clock = clock
        transport = DepotTransport(baseURL: baseURL, exchanger: exchanger ?? URLSessionExchanger(session: session), clock: clock)
    }

    /// `<user caches>/Depot`.
    public static var defaultCacheDirectory: URL? {
        FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first?.appendingPathComponent("Depot")
    }

    // MARK: - Product lists (spec §4.1)

    /// `GET /products_v1.json`: the IDs of the live products, sorted.
    ///
    /// Sends the cached validators; returns the cached list on `304` and when the server cannot be reached
    /// (network error or `5xx`). Throws only when there is nothing cached to fall back on.
    public func productIDs() async throws -> ProductListResponse<[String]> {
        try await productList(path: WirePath.productsV1.pattern, as: ProductListV1.self)
    }

    /// `GET /products_v2.json`: live products with type, texts and pack; cached like ``productIDs()``.
    public func products() async throws -> ProductListResponse<ProductListV2> {
        try await productList(path: WirePath.productsV2.pattern, as: ProductListV2.self)
    }

    private func productList<List: Decodable & Sendable>(path: String, as type: List.Type,
                                                         conditional: Bool = true) async throws -> ProductListResponse<List> {
        let cache = productListCache
        let key = ProductListCache.key(for: try transport.url(path))
        var cached: (entry: ProductListCache.Entry, list: List)?
        if conditional, let entry = await cache?.load(key), let list = try? JSONDecoder().decode(List.self, from: entry.body) {
            cached = (entry, list)
        }
        var request = try transport.request(path)
        if let entry = cached?.entry {
            // RFC 9110 §13.1.2 / §13.1.3: revalidate with both validators; the server prefers If-None-Match.
            if let etag = entry.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let date = entry.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        let answer: HTTPAnswer
        do {
            answer = try await transport.send(request)
        } catch let error as DepotClientError {
            guard let cached, case .transport = error else { throw error }
            return ProductListResponse(list: cached.list, source: .offline, etag: cached.entry.etag,
                                       lastModified: cached.entry.lastModified, offlineReason: error)
        }
        switch answer.status {
        case 200:
            let list: List
            do { list = try JSONDecoder().decode(List.self, from: answer.body) } catch {
                throw DepotClientError.invalidResponse("\(path) is not a product list: \(error)")
            }
            let entry = ProductListCache.Entry(etag: answer.field("ETag"), lastModified: answer.field("Last-Modified"),
                                               body: answer.body)
            try? await cache?.store(entry, key)
            return ProductListResponse(list: list, source: .network, etag: entry.etag, lastModified: entry.lastModified)
        case 304:
            guard let cached else {
                // A 304 to an unconditional request (or a cache lost meanwhile): ask once more without validators.
                guard conditional else { throw DepotClientError.invalidResponse("304 to an unconditional request") }
                return try await productList(path: path, as: type, conditional: false)
            }
            return ProductListResponse(list: cached.list, source: .notModified, etag: cached.entry.etag,
                                       lastModified: cached.entry.lastModified)
        case 500...599 where cached != nil:
            let entry = cached!.entry
            return ProductListResponse(list: cached!.list, source: .offline, etag: entry.etag,
                                       lastModified: entry.lastModified, offlineReason: transport.error(for: answer))
        default:
            throw transport.error(for: answer)
        }
    }
}
