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
    private let armed = Atomic<Bool>(false)
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// The next `freeBytes` call blocks (once).
    func arm() { armed.store(true, ordering: .sequentiallyConsistent) }

    func freeBytes(at path: String) -> Int64 {
        if armed.exchange(false, ordering: .sequentiallyConsistent) {
            entered.signal()
            released.wait()
        }
        return 1 << 40
    }

    func totalBytes(at path: String) -> Int64 { 1 << 41 }

    /// Whether the armed call began within `seconds`.
    func waitUntilEntered(seconds: Double) -> Bool { entered.wait(timeout: .now() + seconds) == .success }

    /// Lets the blocked call return.
    func release() { released.signal() }
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
        space.arm()
        let outcome = try await OffPool.run { () throws -> (entered: Bool, other: String, upload: RawResponse) in
            let upload = try RawHTTPConnection(port: port)
            upload.send("PUT /admin/v1/packs/level7/1/files/a.bin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.adminToken)\r\n"
                        + "\(rangeField)Content-Length: 5\r\n\r\nhello")
            let entered = space.waitUntilEntered(seconds: 60)
            // The loop that took the upload answers another connection while the upload's check is held.
            var other: String
            do {
                let connection = try RawHTTPConnection(port: port)
                connection.send("GET /products_v1.json HTTP/1.1\r\nHost: x\r\n\r\n")
                other = "\(try connection.readResponse(timeout: 10).status)"
            } catch {
                other = "\(error)"
            }
            space.release()
            return (entered, other, try upload.readResponse(timeout: 60))
        }
        #expect(outcome.entered, "the \(kind)'s check reads the volume")
        #expect(outcome.other == "200", "\(kind): the product list while the upload's check was held: \(outcome.other)")
        #expect(outcome.upload.status == status, "\(outcome.upload.text)")
        if status == 200 { #expect(outcome.upload.header("Upload-Offset") == "5") }
    }
}
