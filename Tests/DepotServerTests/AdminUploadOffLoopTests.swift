import DepotServer
import DepotTestSupport
import Dispatch
import Foundation
import Platform
import Synchronization
import Testing

/// A roomy volume whose next free-space answer, once armed, waits until the test releases it: an upload's
/// check held at the moment it reads the volume.
final class GatedVolumeSpace: VolumeSpace {
    /// Arm it to hold the next `freeBytes` call.
    let gate = HoldGate()

    func freeBytes(at path: String) -> Int64 {
        gate.pass()
        return 1 << 40
    }

    func totalBytes(at path: String) -> Int64 { 1 << 41 }
}

/// The admin upload's checks (the version's directory and `current`, free space, path conflicts) run off the
/// event loop: with one loop, a request on another connection is answered while an upload's check is held.
@Suite("Publishing: admin upload checks off the event loop")
struct AdminUploadOffLoopTests {
    static let adminToken = "admin-token-for-tests-0123456789"

    @Test(arguments: [
        ("whole file", "", 201),
        ("resumable piece", "Content-Range: bytes 0-4/15\r\n", 200),
    ])
    func anotherRequestIsAnsweredWhileAnUploadCheckIsHeld(kind: String, rangeField: String, status: Int) async throws {
        let space = GatedVolumeSpace()
        let depot = try await TestDepot.start(volumeSpace: space) {
            $0.adminToken = Self.adminToken
            $0.loops = 1
        }
        defer { Task { await depot.stop() } }
        let port = depot.port
        space.gate.arm()
        let outcome = try await OffPool.run { () throws -> (entered: Bool, other: String, upload: RawResponse) in
            let upload = try RawHTTPConnection(port: port)
            upload.send("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\n"
                        + "\(rangeField)Content-Length: 5\r\n\r\nhello")
            let entered = space.gate.waitUntilEntered(seconds: 60)
            // The loop that took the upload answers another connection while the upload's check is held.
            var other: String
            do {
                let connection = try RawHTTPConnection(port: port)
                connection.send("GET /products_v1.json HTTP/1.1\r\nHost: x\r\n\r\n")
                other = "\(try connection.readResponse(timeout: 10).status)"
            } catch {
                other = "\(error)"
            }
            space.gate.release()
            return (entered, other, try upload.readResponse(timeout: 60))
        }
        #expect(outcome.entered, "the \(kind)'s check reads the volume")
        #expect(outcome.other == "200", "\(kind): the product list while the upload's check was held: \(outcome.other)")
        #expect(outcome.upload.status == status, "\(outcome.upload.text)")
        if status == 200 { #expect(outcome.upload.header("Upload-Offset") == "5") }
    }
}
