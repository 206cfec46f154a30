import AppStoreSimulator
import DepotServer
import DepotTestSupport
import Foundation
import Synchronization
import Testing

/// Calls to Apple wait without holding an event loop or a thread (architecture: slow work off the loops).
@Suite struct PurchaseConcurrencyTests {
    /// While many receipt requests wait on a slow Apple, the product list on the same server is answered:
    /// every catalog request completes while every receipt request is still pending.
    @Test func slowAppleNeverStallsCatalogTraffic() async throws {
        // Apple holds its answers for 1,000 s (released below by stopping the store), far beyond the time the
        // catalog requests may take on a saturated machine (where more than 60 s has been seen).
        try await PurchaseFixture.run(configure: { $0.appleTimeout = 2_000 }) { fixture in
            let pendingCount = 16
            let receipts = (0..<pendingCount).map { _ in
                fixture.apple.issueReceipt([PurchaseFixture.purchase()], behaviour: .init(delay: 1_000))
            }
            let finished = Counter()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for receipt in receipts {
                    group.addTask {
                        // Answered only after the store stops (below): the wait covers everything before that
                        // on a saturated machine, so the 20 s default is not enough.
                        let response = try await fixture.postReceipt(receipt, timeout: 600)
                        finished.increment()
                        return response.status
                    }
                }
                // Every receipt request has reached Apple and is waiting for its answer.
                var polls = 0
                while fixture.apple.callCounts.production < pendingCount && polls < 6000 {
                    try await Task.sleep(for: .milliseconds(10))
                    polls += 1
                }
                #expect(fixture.apple.callCounts.production == pendingCount)

                // Each list is answered long before Apple's answers (a stall would wait for those); 15 s a
                // request leaves room for a saturated machine.
                let port = fixture.depot.port
                for _ in 0..<20 {
                    let list = try await OffPool.run {
                        let connection = try RawHTTPConnection(port: port)
                        connection.send("GET /products_v1.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        return try connection.readResponse(timeout: 15)
                    }
                    #expect(list.status == 200, "\(list.summary)")
                }
                // Keep-alive: several on one connection too.
                let pipelined = try await OffPool.run {
                    let connection = try RawHTTPConnection(port: port)
                    var statuses: [Int] = []
                    for _ in 0..<5 {
                        connection.send("GET /products_v1.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        statuses.append(try connection.readResponse(timeout: 15).status)
                    }
                    return statuses
                }
                #expect(pipelined == [200, 200, 200, 200, 200])
                #expect(finished.value == 0,
                        "the catalog requests must complete while the receipt requests wait on Apple")

                // Apple answers now; every waiting purchase completes.
                await fixture.apple.stop()

                var statuses: [Int] = []
                for try await status in group { statuses.append(status) }
                #expect(statuses == Array(repeating: 200, count: pendingCount))
            }
        }
    }

    /// Identical receipts arriving together share one call to Apple. Apple's answer is held until the server
    /// shows all eight requests waiting for it (`depot_apple_waiting_requests`), so they are in flight together
    /// however slowly a loaded machine delivers them: while they wait, Apple has seen exactly one call.
    @Test func identicalReceiptsInFlightShareOneCall() async throws {
        // Apple is given all the time the arrival may take (a retry after a timeout would be a second call).
        try await PurchaseFixture.run(configure: { $0.appleTimeout = 600 }) { fixture in
            let gate = SimulatedAnswerGate()
            let receipt = fixture.apple.issueReceipt([PurchaseFixture.purchase()], behaviour: .init(gate: gate))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await fixture.postReceipt(receipt, timeout: 600).status }
                }
                var waiting = 0.0
                let deadline = ContinuousClock.now + .seconds(300)
                while waiting < 8, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    waiting = try await Self.metric("depot_apple_waiting_requests", of: fixture) ?? 0
                }
                #expect(waiting == 8, "requests waiting for Apple")
                #expect(fixture.apple.calls(forReceipt: receipt) == 1, "calls to Apple while all eight wait")
                gate.open()
                var statuses: [Int] = []
                for try await status in group { statuses.append(status) }
                return statuses
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(fixture.apple.calls(forReceipt: receipt) == 1)
            #expect(try await Self.metric("depot_apple_waiting_requests", of: fixture) == 0)
        }
    }

    /// The value of the unlabelled series `name` in the server's `/metrics`.
    static func metric(_ name: String, of fixture: PurchaseFixture) async throws -> Double? {
        let text = try await fixture.get("/metrics").text
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }
}

/// A thread-safe count shared with child tasks.
private final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
}
