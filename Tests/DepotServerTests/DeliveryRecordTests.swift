import ArgumentParsing
import DepotTestSupport
import Foundation
import Glibc
import Ledger
import Testing
import DepotServer

/// The delivery record over real HTTP: chunks count once every byte went out to the purchase's tokens, in one
/// response or several; an answer cut short counts only what was written.
@Suite struct DeliveryRecordTests {
    /// Polls the server's ledger until `condition` holds on the purchase's records (the recorder writes once a second).
    static func records(_ fixture: PackFixture, purchase: String, timeout: Duration = .seconds(90),
                        until condition: ([LedgerDelivery]) -> Bool) async throws -> [LedgerDelivery] {
        let ledger = try #require(fixture.depot.app.ledger)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var found: [LedgerDelivery] = []
        while clock.now < deadline {
            found = try await ledger.deliveries(originalTransactionID: purchase)
            if condition(found) { return found }
            try await Task.sleep(for: .milliseconds(50))
        }
        return found
    }

    @Test func rangesWithAResumeInsideAChunkDeliverEveryChunkAndOtherPurchasesOnlyTheirs() async throws {
        let fixture = try await PackFixture.start()
        // chunks.bin: 14336 bytes in 4096-byte chunks (4 chunks); a resume inside chunk 1.
        let whole = fixture.token(transaction: "7000000000000001")
        #expect(try fixture.request("/v1/packs/testpack/1/files/chunks.bin", ["Range": "bytes=0-6000"], credential: .bearer(whole)).status == 206)
        #expect(try fixture.request("/v1/packs/testpack/1/files/chunks.bin", ["Range": "bytes=6001-"],
                                    credential: .query(fixture.token(transaction: "7000000000000001"))).status == 206)
        // Another purchase gets the first two chunks, one request each.
        let half = fixture.token(transaction: "7000000000000002")
        for range in ["bytes=0-4095", "bytes=4096-8191"] {
            #expect(try fixture.request("/v1/packs/testpack/1/files/chunks.bin", ["Range": range], credential: .bearer(half)).status == 206)
        }
        // A HEAD and a 304 send no body bytes.
        #expect(try fixture.request("/v1/packs/testpack/1/files/range.bin", credential: .bearer(half), method: "HEAD").status == 200)

        let first = try await Self.records(fixture, purchase: "7000000000000001") { $0.first?.chunks.count == 4 }
        #expect(first.map(\.path) == ["chunks.bin"])
        #expect(first.first?.chunks.map(\.offset) == [0, 4096, 8192, 12288])
        #expect(first.first?.deliveredBytes == 14336)
        let second = try await Self.records(fixture, purchase: "7000000000000002") { $0.first?.chunks.count == 2 }
        #expect(second.map(\.path) == ["chunks.bin"])
        #expect(second.first?.chunks.map(\.offset) == [0, 4096])
        #expect(second.first?.sent.ranges == [0..<8192])
        await fixture.depot.stop()
    }

    @Test func anAnswerCutShortCountsOnlyTheBytesWritten() async throws {
        let fixture = try await PackFixture.start(extraFiles: PackFixture.hugeFiles())
        let connection = try RawHTTPConnection(port: fixture.depot.port)
        var small: Int32 = 64 * 1024
        setsockopt(connection.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        connection.send("GET /v1/packs/testpack/1/files/\(PackFixture.hugeFile) HTTP/1.1\r\nHost: t\r\n"
                        + "Authorization: Bearer \(fixture.token(transaction: "7000000000000003"))\r\n\r\n")
        var received = 0
        while received < 200_000, let bytes = connection.readSome(timeout: 10) { received += bytes.count }
        // Reset the connection: the server's next write fails and the answer ends half-way.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        shutdown(connection.fd, Int32(SHUT_RDWR))
        let records = try await Self.records(fixture, purchase: "7000000000000003") { !$0.isEmpty }
        let record = try #require(records.first)
        #expect(record.path == PackFixture.hugeFile)
        let sent = record.sent.byteCount
        #expect(sent >= Int64(received))
        #expect(sent < Int64(PackFixture.hugeSize), "the whole file counted although the client left after \(received) bytes")
        #expect(record.sent.ranges.first?.lowerBound == 0)
        #expect(record.deliveredBytes <= sent)
        await fixture.depot.stop()
    }

    @Test func theRecordIsFlushedWhenTheServerStops() async throws {
        let fixture = try await PackFixture.start()
        #expect(try fixture.request("/v1/packs/testpack/1/files/range.bin", credential: .bearer(fixture.token(transaction: "7000000000000004"))).status == 200)
        let data = fixture.depot.dataDirectory
        await fixture.depot.stop()
        let ledger = try await Ledger.open(at: data + "/ledger.sqlite")
        let records = try await ledger.deliveries(originalTransactionID: "7000000000000004")
        #expect(records.map(\.path) == ["range.bin"])
        #expect(records.first?.deliveredBytes == 1000)
        await ledger.close()
    }

    @Test func withTheRecordOffNothingIsWritten() async throws {
        let fixture = try await PackFixture.start { $0.deliveryRecord = .off }
        #expect(try fixture.request("/v1/packs/testpack/1/files/range.bin", credential: .bearer(fixture.token(transaction: "7000000000000005"))).status == 200)
        let data = fixture.depot.dataDirectory
        await fixture.depot.stop()
        let ledger = try await Ledger.open(at: data + "/ledger.sqlite")
        #expect(try await ledger.deliveries(originalTransactionID: "7000000000000005").isEmpty)
        await ledger.close()
    }
}
