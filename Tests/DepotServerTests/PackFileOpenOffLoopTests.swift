import DepotServer
import DepotWire
import DepotTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// The pack file opener whose next open, once armed, waits until the test releases it, then checks and opens as
/// always (`PackFileOpener.system`): a first request for a pack file held at its path check and open, as on a
/// stalled disk. Counts the opens.
final class GatedPackFileOpener: Sendable {
    private let hold = HoldGate()
    private let count = Atomic<Int>(0)

    /// The next open blocks (once).
    func arm() { hold.arm() }

    /// The opens so far.
    var opens: Int { count.load(ordering: .sequentiallyConsistent) }

    var opener: PackFileOpener {
        PackFileOpener { [self] directory, relative, size in
            count.add(1, ordering: .sequentiallyConsistent)
            hold.pass()
            return PackFileOpener.system.open(directory, relative, size)
        }
    }

    /// Whether the armed open began within `seconds`.
    func waitUntilEntered(seconds: Double) -> Bool { hold.waitUntilEntered(seconds: seconds) }

    /// Lets the blocked open go on.
    func release() { hold.release() }
}

/// The first request for a pack file on a loop checks the path and opens the file off the event loop: with one
/// loop, a product list on another connection is answered while that open is held (a stalled disk stalls no
/// other request), and the file is then answered as before and kept open by the loop for the next request.
@Suite("Packs: a pack file's first open off the event loop")
struct PackFileOpenOffLoopTests {
    static let edgeSecret = "edge-secret-0123456789abcdef-0123456789"

    /// What the test sends and reads on one connection, or the error it got.
    struct Outcome: Sendable {
        var entered = false
        var other = ""
        var first: RawResponse?
        var again: RawResponse?
    }

    static func start(_ gate: GatedPackFileOpener) async throws -> PackFixture {
        try await PackFixture.start(packFileOpener: gate.opener) {
            $0.loops = 1
            $0.edgeSecret = Self.edgeSecret
        }
    }

    /// Sends `request` with the gate armed, runs `meanwhile` once the file's open is held (its result is the
    /// outcome's `other`), releases the open, reads the answer, then sends `request` again on the same connection.
    static func holdingTheOpen(_ gate: GatedPackFileOpener, port: Int, request: String,
                               meanwhile: @escaping @Sendable () -> String) async throws -> Outcome {
        gate.arm()
        return try await OffPool.run { () throws -> Outcome in
            var outcome = Outcome()
            let download = try RawHTTPConnection(port: port)
            download.send(request)
            outcome.entered = gate.waitUntilEntered(seconds: 60)
            outcome.other = meanwhile()
            gate.release()
            outcome.first = try download.readResponse(timeout: 60)
            download.send(request)
            outcome.again = try download.readResponse(timeout: 60)
            return outcome
        }
    }

    /// The request for `range.bin` by the file URL (with a token) or by the edge's origin URL (with its secret).
    static func fileRequest(_ fixture: PackFixture, viaEdge: Bool) -> String {
        viaEdge
            ? "GET /v1/edge/origin/testpack/1/files/range.bin HTTP/1.1\r\nHost: x\r\n\(EdgeRoutes.secretField): \(edgeSecret)\r\n\r\n"
            : "GET \(fixture.fileURL("range.bin")) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.token())\r\n\r\n"
    }

    @Test(arguments: [("the file URL", false), ("the edge's origin URL", true)])
    func anotherConnectionIsAnsweredWhileTheOpenIsHeld(route: String, viaEdge: Bool) async throws {
        let gate = GatedPackFileOpener()
        let fixture = try await Self.start(gate)
        defer { Task { await fixture.stop() } }
        let (port, request) = (fixture.depot.port, Self.fileRequest(fixture, viaEdge: viaEdge))
        // The loop that took the file request answers another connection while the file's open is held.
        let outcome = try await Self.holdingTheOpen(gate, port: port, request: request) {
            do {
                let connection = try RawHTTPConnection(port: port)
                connection.send("GET /products_v1.json HTTP/1.1\r\nHost: x\r\n\r\n")
                return "\(try connection.readResponse(timeout: 10).status)"
            } catch {
                return "\(error)"
            }
        }
        let bytes = try #require(fixture.contents["range.bin"])
        let etag = try fixture.entry("range.bin").etag
        #expect(outcome.entered, "\(route): the first request opens the file")
        #expect(outcome.other == "200", "\(route): the product list while the file's open was held: \(outcome.other)")
        #expect(outcome.first?.status == 200 && outcome.first?.body == bytes, "\(outcome.first?.rawHead ?? "")")
        #expect(outcome.first?.header("ETag") == etag)
        #expect(outcome.again?.status == 200 && outcome.again?.body == bytes, "\(outcome.again?.rawHead ?? "")")
        #expect(gate.opens == 1, "\(route): the loop kept the file opened off the loop for the next request")
    }

    /// A reload while a file's open is held drops what the loop had open: the file opened for the older snapshot
    /// is answered but not kept, and the next request opens it again (a reload releases the loop's descriptors).
    @Test func aFileOpenedAcrossAReloadIsNotKept() async throws {
        let gate = GatedPackFileOpener()
        let fixture = try await Self.start(gate)
        defer { Task { await fixture.stop() } }
        let (port, request, app) = (fixture.depot.port, Self.fileRequest(fixture, viaEdge: false), fixture.depot.app)
        let outcome = try await Self.holdingTheOpen(gate, port: port, request: request) {
            app.reloadCatalog() ? "reloaded" : "not reloaded"
        }
        #expect(outcome.entered && outcome.other == "reloaded")
        #expect(outcome.first?.status == 200 && outcome.again?.status == 200)
        #expect(gate.opens == 2, "opened again after the reload")
    }
}
