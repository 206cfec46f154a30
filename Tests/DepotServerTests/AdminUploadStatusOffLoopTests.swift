import DepotServer
import DepotTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The publisher's read of a pack's newest version (its version directories and `current`) whose next call, once
/// armed, waits until the test releases it, then reads the disk as always: an admin check held at that read.
final class GatedNewestVersion: Sendable {
    /// Arm it to hold the next read.
    let gate = HoldGate()

    func read(packDirectory: String) -> Int {
        gate.pass()
        return Publisher.VersionReader.system.newest(packDirectory)
    }
}

/// The upload status look-up (`GET /admin/v1/packs/{pack}/{version}/files/{path}`) reads the pack's versions off the
/// event loop: with one loop, a request on another connection is answered while that read is held, and the look-up
/// then answers as before (the status of a new version's upload, or the refusal of a published version).
@Suite("Publishing: admin upload status off the event loop")
struct AdminUploadStatusOffLoopTests {
    static let adminToken = "admin-token-for-tests-0123456789"

    @Test(arguments: [
        ("a new version", "level7/1", 200),
        ("a published version", "level2/1", 409),
    ])
    func anotherRequestIsAnsweredWhileTheVersionCheckIsHeld(kind: String, packVersion: String, status: Int) async throws {
        let reader = GatedNewestVersion()
        let gate = reader.gate
        let depot = try await TestDepot.start(versionReader: Publisher.VersionReader(newest: reader.read)) {
            $0.adminToken = Self.adminToken
            $0.loops = 1
        }
        defer { Task { await depot.stop() } }
        let port = depot.port
        gate.arm()
        let outcome = try await OffPool.run { () throws -> (entered: Bool, other: String, lookup: RawResponse) in
            let lookup = try RawHTTPConnection(port: port)
            lookup.send("GET /admin/v1/packs/\(packVersion)/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\n\r\n")
            let entered = gate.waitUntilEntered(seconds: 60)
            // The loop that took the look-up answers another connection while the look-up's version check is held.
            var other: String
            do {
                let connection = try RawHTTPConnection(port: port)
                connection.send("GET /products_v1.json HTTP/1.1\r\nHost: x\r\n\r\n")
                other = "\(try connection.readResponse(timeout: 10).status)"
            } catch {
                other = "\(error)"
            }
            gate.release()
            return (entered, other, try lookup.readResponse(timeout: 60))
        }
        #expect(outcome.entered, "the look-up for \(kind) reads the pack's versions")
        #expect(outcome.other == "200", "\(kind): the product list while the look-up's version check was held: \(outcome.other)")
        #expect(outcome.lookup.status == status, "\(outcome.lookup.text)")
        let json = ConsoleHTTP.json(outcome.lookup)
        if status == 200 {
            #expect(outcome.lookup.header("Upload-Offset") == "0")
            #expect(json["receivedBytes"] as? Int == 0 && json["size"] as? Int == 0 && json["complete"] as? Bool == false)
        } else {
            #expect(ConsoleHTTP.errorCode(outcome.lookup) == "version_exists")
        }
    }
}
