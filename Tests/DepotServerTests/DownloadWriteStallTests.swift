import DepotCore
import DepotWire
import DepotCrypto
import DepotServer
import DepotTestSupport
import Foundation
import Glibc
import Testing
import Server

/// spec §3 `--write-timeout`, http-decisions.md "a write stall timeout for downloads that stop reading": a client
/// that stops reading is cut off once no progress was made for the timeout; a slow but steady reader is not,
/// however long its whole download takes; other clients are answered meanwhile.
@Suite struct DownloadWriteStallTests {
    static let hugeFile = PackFixture.hugeFile
    static let hugeSize = PackFixture.hugeSize

    @Test func stalledReaderIsCutOffSteadyReaderFinishes() async throws {
        try await PackFixture.with(extraFiles: PackFixture.hugeFiles(), configure: { $0.writeTimeout = 4 }) { fixture in
            let server = fixture.depot.app.server
            let port = fixture.depot.port
            let target = fixture.fileURL(Self.hugeFile)
            let token = fixture.token()
            let request = "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n"
            let expectedSHA = try fixture.entry(Self.hugeFile).sha256

            // 1. A client asks for the huge file and never reads.
            let stall = try await OffPool.run { () throws -> (seconds: Double?, received: Int, closed: Bool) in
                let stalled = try RawHTTPConnection(port: port)
                stalled.limitReceiveBuffer(to: 16 * 1024)
                stalled.send(request)
                let start = Date()

                // Meanwhile a normal client gets quick answers.
                for path in ["/v1/packs/testpack/1/manifest", fixture.fileURL("range.bin"), fixture.fileURL("chunks.bin")] {
                    let t0 = Date()
                    let response = try fixture.request(path)
                    #expect(response.status == 200)
                    // Sooner than the write timeout: a loop held by the stalled write would wait for it.
                    #expect(Date().timeIntervalSince(t0) < 3.9)
                }

                // Wait (bounded) for the server to drop the stalled connection: its open-connection count returns to 0
                // after having counted it.
                var seen = false
                var closedAfter: Double?
                while Date().timeIntervalSince(start) < 30 {
                    let open = server.openConnections
                    if open > 0 { seen = true }
                    if seen && open == 0 { closedAfter = Date().timeIntervalSince(start); break }
                    usleep(10_000)
                }
                // What is left to read ends early, with the connection closed.
                let rest = stalled.readUntilClose(timeout: 5)
                return (closedAfter, rest.bytes.count, rest.closed)
            }
            let seconds = try #require(stall.seconds, "the stalled connection was never closed")
            // Not before the 4 s timeout; the upper bound leaves room for a saturated machine's late timers.
            #expect(seconds >= 3.9 && seconds < 20, "closed after \(seconds) s")
            #expect(stall.closed)
            #expect(stall.received < Self.hugeSize)

            // 2. A slow but steady reader: small reads, a pause well under the timeout after every 1 MiB,
            //    more than the timeout in all — it completes. (4 s of timeout against 0.5 s pauses: a reader
            //    thread held back by a saturated machine for a second or two more must not be cut off.)
            let steady = try await OffPool.run { () throws -> (sha: String, bytes: Int, seconds: Double) in
                let connection = try RawHTTPConnection(port: port)
                connection.limitReceiveBuffer(to: 64 * 1024)
                connection.send(request)
                let start = Date()
                var buffer: [UInt8] = []
                var headEnd: Int?
                var nextPause = 1 << 20
                while true {
                    guard let piece = connection.readSome(timeout: 5), !piece.isEmpty else { break }
                    buffer += piece
                    if headEnd == nil { headEnd = RawBytes.find([13, 10, 13, 10], in: buffer) }
                    guard let end = headEnd else { continue }
                    let body = buffer.count - end - 4
                    if body >= Self.hugeSize { break }
                    if body >= nextPause {
                        usleep(500_000)
                        nextPause += 1 << 20
                    }
                }
                let end = try #require(headEnd)
                let body = Array(buffer[(end + 4)...])
                return (Hex.encode(SHA256.hash(body)), body.count, Date().timeIntervalSince(start))
            }
            #expect(steady.bytes == Self.hugeSize, "the steady reader got \(steady.bytes) of \(Self.hugeSize) bytes in \(steady.seconds) s")
            #expect(steady.sha == expectedSHA)
            #expect(steady.seconds > 4.0, "the steady download took \(steady.seconds) s: longer than the timeout in all")
        }
    }
}
