import Foundation
import Testing
import DepotClient

/// Issue 11, defect 1 and missing piece 6: the download as one call that yields its events (a loop over them
/// drives the download instead of waiting forever for a `start()` that comes after it), and a receipt given
/// as bytes or as base64 text to the same `unlock(receipt:)`.
@Suite struct DownloadStreamTests {
    @Test func iteratingDownloadRunsItToTheEnd() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader()
        var events: [PackDownloadEvent] = []
        for try await event in downloader.download() { events.append(event) }
        guard case .started(_, let resumed) = events.first, case .completed(let manifest) = events.last else {
            Issue.record("\(events)")
            return
        }
        #expect(resumed == 0)
        #expect(events.filter { if case .progress = $0 { true } else { false } }.count == PackFixture.chunkCount)
        fixture.expectInstalled(manifest: manifest)
        #expect(await downloader.state == .completed)
        // Again: nothing to do, the completed manifest at once.
        var again: [PackDownloadEvent] = []
        for try await event in downloader.download() { again.append(event) }
        #expect(again.isEmpty)
    }

    @Test func pausingFromTheLoopEndsItAndTheNextDownloadResumes() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader(parallel: 1)
        var last: PackDownloadEvent?
        for try await event in downloader.download() {
            if case .progress = event { await downloader.pause() }
            last = event
        }
        guard case .paused = last else { Issue.record("\(String(describing: last))"); return }
        let kept = await downloader.progress.completedBytes
        #expect(kept > 0 && kept < PackFixture.totalBytes)
        var resumed: Int64 = -1
        for try await event in downloader.download() { if case .started(_, let bytes) = event { resumed = bytes } }
        #expect(resumed == kept)
        #expect(await downloader.state == .completed)
    }

    @Test func errorsEndTheStreamByThrowing() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.offline = true }
        let downloader = fixture.downloader()
        await #expect(throws: DepotClientError.self) {
            for try await _ in downloader.download() {}
        }
    }

    @Test func aReceiptIsBytesOrBase64Text() {
        let binary = Data([0x30, 0x82, 0x01, 0x0A, 0xFF, 0x00])
        #expect(DepotClient.base64Receipt(binary) == binary.base64EncodedString())
        let text = binary.base64EncodedString()
        #expect(DepotClient.base64Receipt(Data(text.utf8)) == text)
        // What a file holds: line breaks (also in the middle) and a trailing newline.
        let long = Data((0..<200).map { UInt8($0) }).base64EncodedString()
        let wrapped = long.prefix(76) + "\r\n" + long.dropFirst(76) + "\n"
        #expect(DepotClient.base64Receipt(Data(wrapped.utf8)) == long)
        // Text that is not base64 (a length that is not a multiple of 4) is sent as bytes.
        #expect(DepotClient.base64Receipt(Data("abc".utf8)) == Data("abc".utf8).base64EncodedString())
        #expect(DepotClient.base64Receipt(Data()) == "")
    }

    @Test func unlockSendsBase64TextAsItIs() async throws {
        let server = FakeDepot()
        defer { server.close() }
        server.update { $0.receiptsReply = .json(200, "{\"environment\": \"Production\", \"entitlements\": [], \"rejected\": []}") }
        _ = try await server.client().unlock(receipt: Data("AAECAw==\n".utf8))
        let body = try #require(JSONSerialization.jsonObject(with: server.requests.first?.body ?? Data()) as? [String: Any])
        #expect(body["receipt"] as? String == "AAECAw==")
    }
}
