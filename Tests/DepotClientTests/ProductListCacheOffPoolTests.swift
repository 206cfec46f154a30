import DepotClient
import DepotTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The product-list cache's file work runs on a queue of the client's own (``FileWorkQueue``), never on Swift's
/// cooperative threads: a cache read or write that blocks does not hold the pool every other task of the app needs.
///
/// A FIFO cannot stand in for the cache file itself: Foundation's `Data(contentsOf:)` opens with `O_NONBLOCK` and
/// refuses what is not a regular file, and an atomic write renames over the destination without opening it. So the
/// test's file operations (``ProductListCache/Files``) first open a FIFO of their own, which waits in the kernel for
/// a partner (`wait_for_partner`) like a read or write on a stalled volume, then do the real work.
@Suite struct ProductListCacheOffPoolTests {
    enum Stage: String, CaseIterable, Sendable { case load, store }

    let list = "[\"com.example.depot.level2\", \"com.example.depot.level3\"]"

    @Test(arguments: Stage.allCases)
    func blockedCacheFilesHoldNoCooperativeThread(_ stage: Stage) async throws {
        // More fetches than the pool has threads, each by a client of its own (a client's cache work is serial, so
        // one client's fetches would wait on one thread): with the file work on the pool, every pool thread is held.
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let server = FakeDepot()
        let caches = (0..<count).map { _ in ScratchDirectory() }
        defer { server.close(); for cache in caches { cache.remove() } }
        server.setList("products_v1.json", list, etag: "\"a1\"", lastModified: "Mon, 30 Nov 2026 02:33:58 GMT")
        if stage == .load {
            // Something to load: each cache holds the list once, stored without a gate.
            for cache in caches { #expect(try await server.client(cacheDirectory: cache.url).productIDs().source == .network) }
        }
        let gates = try caches.map { try StallGate(in: $0.url) }
        let clients = zip(caches, gates).map { cache, gate in
            server.client(cacheDirectory: cache.url, cacheFiles: gate.stalling(stage))
        }
        let requestsBefore = server.requests.count

        // Judged and released on a thread of its own, started before the fetches: it needs no cooperative thread to
        // wait, time out or release. Once every fetch's file operation waits in its FIFO's open, does a new task run?
        // Then every gate opens, and the pool is free again whatever happened.
        let verdict = Mutex<(entered: Int, waiters: Int, responsive: Bool)?>(nil)
        let judged = DispatchSemaphore(value: 0)
        Thread {
            // Generous bounds, which only a failure waits out: at the start of a full `swift test` hundreds of tests
            // crowd the same two threads, and file work took up to 70 s to get to its FIFOs there.
            let entered = StallGate.waitUntilEntered(gates, seconds: 300)
            // Other tests may wait on FIFOs too: this only confirms that these ones do, in the kernel.
            let waiters = FileWorkOffPoolTests.waitForFIFOWaiters(count, seconds: 60)
            let answered = DispatchSemaphore(value: 0)
            Task { answered.signal() }
            let responsive = answered.wait(timeout: .now() + 60) == .success
            for gate in gates { gate.open() }
            verdict.withLock { $0 = (entered, waiters, responsive) }
            judged.signal()
        }.start()
        let fetches = clients.map { client in Task { try await client.productIDs() } }
        let (entered, waiters, responsive) = try await OffPool.run {
            judged.wait()
            return verdict.withLock { $0 } ?? (0, 0, false)
        }
        #expect(entered == count, "\(entered) of \(count) cache \(stage)s reached their FIFO")
        #expect(waiters >= count, "\(waiters) threads waited in a FIFO's open for \(count) cache \(stage)s")
        #expect(responsive, "the cooperative pool ran a new task while the cache \(stage)s were blocked")
        let inTask = gates.filter { $0.ranInTask }.count
        #expect(inTask == 0, "\(inTask) of \(count) cache \(stage)s ran inside a task, on a cooperative thread")

        // Every fetch completes as it would have without the stall.
        for fetch in fetches {
            let answer = try await fetch.value
            #expect(answer.source == (stage == .load ? .notModified : .network))
            #expect(answer.list == ["com.example.depot.level2", "com.example.depot.level3"])
            #expect(answer.etag == "\"a1\"")
        }
        let sent = server.requests.dropFirst(requestsBefore)
        #expect(sent.count == count)
        // A load gave the stored validators; a store wrote the list, which the next fetch revalidates.
        #expect(sent.allSatisfy { $0.header("If-None-Match") == (stage == .load ? "\"a1\"" : nil) })
        if stage == .store {
            for client in clients { #expect(try await client.productIDs().source == .notModified) }
        }
    }
}

/// A FIFO that a cache file operation opens before doing its work: the open waits until ``open()``, as a read or
/// write on a stalled volume would. Records whether the operation ran inside a task.
final class StallGate: Sendable {
    let path: String
    private let state = Mutex((entered: 0, inTask: false))

    init(in directory: URL) throws {
        path = directory.appendingPathComponent("stall.fifo").path
        try #require(mkfifo(path, 0o600) == 0)
    }

    /// The system's file operations, with `stage`'s waiting at this gate first.
    func stalling(_ stage: ProductListCacheOffPoolTests.Stage) -> ProductListCache.Files {
        var files = ProductListCache.Files.system
        switch stage {
        case .load: files.read = { file in self.pass(); return try ProductListCache.Files.system.read(file) }
        case .store: files.write = { data, file in self.pass(); try ProductListCache.Files.system.write(data, file) }
        }
        return files
    }

    var entered: Int { state.withLock { $0.entered } }
    var ranInTask: Bool { state.withLock { $0.inTask } }

    private func pass() {
        let inTask = withUnsafeCurrentTask { $0 != nil }
        state.withLock { $0.entered += 1; $0.inTask = $0.inTask || inTask }
        // Waits for a writer (or, once ``open()`` replaced the FIFO, opens a regular file at once).
        let fd = Foundation.open(path, O_RDONLY)
        if fd >= 0 { close(fd) }
    }

    /// Lets the operation waiting in the FIFO's open go on, and any later one pass at once.
    func open() {
        // O_RDWR never waits on Linux; it is the writer the waiting open wants.
        let writer = Foundation.open(path, O_RDWR | O_NONBLOCK)
        // A regular file takes the FIFO's place before the writer goes, for an operation that had not got to its open
        // yet (only when the test fails), which would otherwise wait for ever.
        _ = FileManager.default.createFile(atPath: path + ".regular", contents: Data())
        rename(path + ".regular", path)
        if writer >= 0 { close(writer) }
    }

    /// Waits (polling, at most `seconds`) until an operation entered every gate; returns how many gates it entered.
    static func waitUntilEntered(_ gates: [StallGate], seconds: Double) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        var entered = 0
        while Date() < deadline {
            entered = gates.filter { $0.entered > 0 }.count
            if entered == gates.count { return entered }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return entered
    }
}
