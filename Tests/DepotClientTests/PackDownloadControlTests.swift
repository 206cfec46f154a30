import Foundation
import Synchronization
import Testing
import DepotClient

/// Free space, token renewal, pause, resume and cancel.
@Suite struct PackDownloadControlTests {
    @Test func insufficientSpaceStopsBeforeWritingAnythingAndResumesOnceFreed() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.space.set(500)
        let downloader = fixture.downloader()
        let log = EventLog(downloader)
        let error = await depotError { _ = try await downloader.start() }
        guard case .insufficientSpace(let required, let available) = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(required == 1000)
        #expect(available == 500)
        #expect(await downloader.state == .waitingForSpace(required: 1000, available: 500))
        #expect(fixture.server.chunkRequests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))

        fixture.space.set(1 << 30)
        #expect(try await downloader.start().manifest != nil)
        fixture.expectInstalled()
        let events = await log.finished()
        #expect(events.contains { if case .insufficientSpace(1000, 500) = $0 { true } else { false } })
    }

    @Test func theReserveCountsLikeTheServersPlan() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let available: Int64 = (16 << 20) + 999
        fixture.space.set(available)
        let error = await depotError { _ = try await fixture.downloader(reserve: .standard).start() }
        guard case .insufficientSpace(let required, available) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(required == 1000 + (16 << 20))
        #expect(SpaceReserve.standard.bytes(forAvailable: 10_000 << 20) == 200 << 20)
    }

    @Test func spaceRunningOutMidwayStopsAndLaterContinues() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { [space = fixture.space] state in
            state.chunkHook = { ordinal, _ in
                if ordinal == 3 { space.set(10) }
                return nil
            }
        }
        let downloader = fixture.downloader()
        let error = await depotError { _ = try await downloader.start() }
        guard case .insufficientSpace(1000, 10) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(await downloader.progress.completedBytes == 2500)
        fixture.space.set(1 << 30)
        _ = try await downloader.start()
        #expect(fixture.server.chunkRequests.count == PackFixture.chunkCount)
        fixture.expectInstalled()
    }

    @Test func anExpiredTokenIsRenewedAndTheDownloadContinues() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let renewals = Mutex(0)
        fixture.server.update { state in
            state.chunkHook = { [server = fixture.server] ordinal, _ in
                if ordinal == 3 { server.update { $0.expiredTokens.insert("t1"); $0.acceptedTokens.insert("t2") } }
                return nil
            }
        }
        let downloader = fixture.downloader(renewToken: {
            renewals.withLock { $0 += 1 }
            return "t2"
        })
        let log = EventLog(downloader)
        _ = try await downloader.start()
        #expect(renewals.withLock { $0 } == 1)
        #expect(await downloader.token == "t2")
        #expect(await log.finished().tokenRenewals == 1)
        let chunks = fixture.server.chunkRequests
        #expect(chunks.count == PackFixture.chunkCount + 1)
        #expect(chunks[0..<3].allSatisfy { $0.header("Authorization") == "Bearer t1" })
        #expect(chunks[3...].allSatisfy { $0.header("Authorization") == "Bearer t2" })
        fixture.expectInstalled()
    }

    /// With several chunks in flight when the token expires, they share one renewal (one receipt validation).
    @Test func chunksInFlightShareOneRenewal() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let renewals = Mutex(0)
        fixture.server.update { state in
            state.chunkHook = { [server = fixture.server] ordinal, _ in
                if ordinal == 2 { server.update { $0.expiredTokens.insert("t1"); $0.acceptedTokens.insert("t2") } }
                return nil
            }
        }
        let downloader = fixture.downloader(parallel: 4, renewToken: {
            renewals.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(50))   // the other chunks get their 401 meanwhile
            return "t2"
        })
        _ = try await downloader.start()
        #expect(renewals.withLock { $0 } == 1)
        #expect(fixture.server.chunkRequests.filter { $0.header("Authorization") == "Bearer t1" }.count > 2,
                "several chunks were in flight with the old token")
        fixture.expectInstalled()
    }

    @Test func anExpiredTokenWithoutRenewalFails() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.expiredTokens = ["t1"] }
        let error = await depotError { _ = try await fixture.downloader().start() }
        guard case .tokenExpired = error else { Issue.record("got \(String(describing: error))"); return }
    }

    @Test func aRenewalThatKeepsExpiringGivesUp() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.expiredTokens = ["t1"] }
        let downloader = fixture.downloader(renewToken: { "t1" })
        let error = await depotError { _ = try await downloader.start() }
        guard case .tokenExpired = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(fixture.server.requests.count == 3)
    }

    @Test func pauseStopsTheRunAndResumeFinishesIt() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader()
        fixture.server.update { state in
            state.chunkHook = { ordinal, _ in
                guard ordinal == 3 else { return nil }
                await downloader.pause()
                return nil
            }
        }
        let log = EventLog(downloader)
        let outcome = try await downloader.start()
        #expect(outcome.isPaused)
        #expect(await downloader.state == .paused)
        // The chunk in flight when pause() came is finished and kept (its request is not cancelled); no further one starts.
        #expect(fixture.server.chunkRequests.count == 3)
        #expect(fixture.journal?.files["stages.bin"]?.verified == [0, 1, 2])
        #expect(await downloader.progress.completedBytes == 2500)
        #expect(await log.waitFor { if case .paused = $0 { true } else { false } })

        fixture.server.update { $0.chunkHook = nil }
        #expect(try await downloader.resume().manifest != nil)
        fixture.expectInstalled()
        // Nothing is fetched twice.
        #expect(fixture.server.chunkRequests.count == PackFixture.chunkCount)
        #expect(fixture.server.chunkRequests[2].header("Range") == "bytes=2000-2499")
    }

    @Test func cancelRemovesPartialFilesAndTheJournal() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        try FileManager.default.createDirectory(at: fixture.destination, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: fixture.destination.appendingPathComponent("keep.txt"))
        fixture.server.update { $0.chunkHook = PackResumeTests.dropConnection(at: 6) }
        let downloader = fixture.downloader()
        let log = EventLog(downloader)
        _ = await depotError { _ = try await downloader.start() }
        #expect(fixture.exists("stages.bin") && fixture.exists("maps/deep/level 1.map"))
        #expect(fixture.exists(PackDownloadOptions.journalFileName))

        await downloader.cancel()
        for path in ["stages.bin", "audio/theme.ogg", "audio", "maps/deep/level 1.map", "maps", PackDownloadOptions.journalFileName] {
            #expect(!fixture.exists(path), "\(path) left behind")
        }
        #expect(fixture.exists("keep.txt"))
        #expect(await downloader.state == .cancelled)
        guard case .cancelled = await log.finished().last else { Issue.record("no cancelled event"); return }
        let error = await depotError { _ = try await downloader.start() }
        guard case .cancelled = error else { Issue.record("got \(String(describing: error))"); return }
    }

    @Test func cancelInANewProcessUsesTheJournal() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        fixture.server.update { $0.chunkHook = PackResumeTests.dropConnection(at: 5) }
        _ = await depotError { _ = try await fixture.downloader().start() }
        #expect(fixture.exists("audio/theme.ogg"))
        await fixture.downloader().cancel()
        #expect(!fixture.exists("stages.bin"))
        #expect(!fixture.exists("audio"))
        #expect(!fixture.exists(PackDownloadOptions.journalFileName))
    }

    @Test func cancelDuringARunStopsItAndCleansUp() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader()
        let cancelling = Mutex<Task<Void, Never>?>(nil)
        fixture.server.update { state in
            state.chunkHook = { ordinal, _ in
                guard ordinal == 2 else { return nil }
                // Cancel while this chunk is in flight: it is answered (its request is never cancelled), then
                // the run stops, nothing more is requested, and what was written is removed.
                cancelling.withLock { $0 = Task { await downloader.cancel() } }
                while await downloader.state != .cancelled { try? await Task.sleep(for: .milliseconds(1)) }
                return nil
            }
        }
        let error = await depotError { _ = try await downloader.start() }
        guard case .cancelled = error else { Issue.record("got \(String(describing: error))"); return }
        await cancelling.withLock { $0 }?.value
        #expect(!fixture.exists("stages.bin"))
        #expect(!fixture.exists(PackDownloadOptions.journalFileName))
        #expect(fixture.server.chunkRequests.count == 2)
        #expect(await downloader.state == .cancelled)
    }

    /// A cancel that arrives while the last chunk is in flight still cancels: no `.completed` outcome for
    /// files that cancel() then deletes.
    @Test func cancelDuringTheLastChunkIsACancel() async throws {
        let fixture = PackFixture()
        defer { fixture.close() }
        let downloader = fixture.downloader()
        let cancelling = Mutex<Task<Void, Never>?>(nil)
        fixture.server.update { state in
            state.chunkHook = { ordinal, _ in
                guard ordinal == PackFixture.chunkCount else { return nil }
                cancelling.withLock { $0 = Task { await downloader.cancel() } }
                while await downloader.state != .cancelled { try? await Task.sleep(for: .milliseconds(1)) }
                return nil
            }
        }
        let error = await depotError { _ = try await downloader.start() }
        guard case .cancelled = error else { Issue.record("got \(String(describing: error))"); return }
        await cancelling.withLock { $0 }?.value
        #expect(!fixture.exists("stages.bin"))
        #expect(await downloader.state == .cancelled)
    }
}
