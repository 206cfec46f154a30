import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// A download the client leaves half-way is in `/metrics` like one sent in full: its request under its route
/// and status, and the body bytes it did send in `depot_http_response_bytes_total` (they left the server).
@Suite struct InterruptedDownloadMetricsTests {
    @Test func aDownloadTheClientLeavesCountsItsRequestAndTheBytesItSent() async throws {
        let fixture = try await PackFixture.start(extraFiles: PackFixture.hugeFiles())
        let target = fixture.fileURL(PackFixture.hugeFile)
        do {
            let leaving = try RawHTTPConnection(port: fixture.depot.port)
            leaving.limitReceiveBuffer(to: 16 * 1024)
            leaving.send("GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token())\r\n\r\n")
            // The answer has started; then the client goes away (closing the socket with unread bytes resets it).
            #expect(leaving.readSome(timeout: 30)?.isEmpty == false)
        }
        let series = "depot_http_response_bytes_total{route=\"pack_file\"}"
        var samples: [String: Double] = [:]
        let counted = try await eventually(within: 30) {
            samples = try OperationsTests.samples(fixture.depot.get("/metrics").text)
            return (samples[series] ?? 0) > 0
        }
        await fixture.depot.stop()
        #expect(counted, "no pack_file bytes in \(samples.filter { $0.key.contains("pack_file") })")
        #expect(samples["depot_http_requests_total{route=\"pack_file\",status=\"200\"}"] == 1)
        #expect((samples[series] ?? 0) < Double(PackFixture.hugeSize), "only the bytes written before the client left")
    }
}
