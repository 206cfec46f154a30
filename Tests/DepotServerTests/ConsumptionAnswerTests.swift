import AppStoreSimulator
import ArgumentParsing
import DepotTestSupport
import Foundation
import Ledger
import Testing
import DepotServer

/// Answers to `CONSUMPTION_REQUEST` (spec app-store-server-api §7) with `--consumption-info on`, end to end:
/// a purchase through the simulated Server API, pack files downloaded (or not) with its token, the request
/// posted as Apple posts it, and the Send Consumption Information call the simulated store received.
@Suite struct ConsumptionAnswerTests {
    /// level2 version 1 (the sample): README.txt (48 bytes, 1 chunk), stages.bin (1 MiB + 256 KiB, 2 chunks),
    /// stages/index.json (878 bytes, 1 chunk).
    static let packBytes: Int64 = 1_311_646

    static func start() async throws -> PurchaseFixture {
        try await PurchaseFixture.start(serverAPI: true) { $0.consumptionInfo = .on }
    }

    /// A purchase of level2 the simulated store knows, presented to Depot: its transaction and download token.
    static func buy(_ fixture: PurchaseFixture) async throws -> (id: String, token: String) {
        let transaction = fixture.apple.serverAPI.purchase(PurchaseFixture.level2, customer: "customer-\(UUID().uuidString)")
        let jws = try #require(try fixture.apple.serverAPI.signedTransaction(transaction.transactionID))
        let response = try await fixture.postTransactions([jws])
        #expect(response.status == 200, "\(response.summary)")
        return (transaction.transactionID, try #require(response.token))
    }

    /// `GET` of a level2 file with the token, with `Range` when given; checks the status.
    static func download(_ fixture: PurchaseFixture, _ path: String, token: String, range: String? = nil) async throws {
        var fields = ["Authorization": "Bearer \(token)"]
        fields["Range"] = range
        let depot = fixture.depot
        let answer = try await OffPool.run { [fields] in try depot.get("/v1/packs/level2/1/files/\(path)", fields) }
        #expect(answer.status == (range == nil ? 200 : 206), "\(path) \(range ?? ""): \(answer.status)")
    }

    /// Waits until the server's delivery record shows `chunks` chunks of the purchase (it writes once a second).
    static func waitForRecord(_ fixture: PurchaseFixture, purchase: String, chunks: Int) async throws {
        let ledger = try #require(fixture.depot.app.ledger)
        let recorded = await Self.poll(timeout: 90) {
            let summary = try? await ledger.deliverySummary(originalTransactionID: purchase)
            return summary?.reduce(0) { $0 + $1.chunks } == chunks
        }
        #expect(recorded, "the delivery record never showed \(chunks) chunks")
    }

    /// Posts the simulated store's `CONSUMPTION_REQUEST` about `transaction`; returns its signed payload.
    @discardableResult
    static func requestRefund(_ fixture: PurchaseFixture, transaction: String) async throws -> String {
        let uuid = try #require(fixture.apple.serverAPI.requestRefund(transaction))
        let payload = try #require(fixture.apple.serverAPI.signedPayload(ofNotification: uuid))
        let answer = try await fixture.notify(signedPayload: payload)
        #expect(answer.status == 200, "\(answer.summary)")
        return payload
    }

    /// The answers the store accepted once `count` have arrived (or after `timeout` seconds).
    static func answers(_ api: SimulatedServerAPI, count: Int, timeout: Double = 90) async -> [RecordedConsumption] {
        _ = await poll(timeout: timeout) { api.consumptionRequests.count >= count }
        return api.consumptionRequests
    }

    static func poll(timeout: Double, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return await condition()
    }

    static func fields(_ answer: RecordedConsumption?) -> [String: String] {
        guard let answer, let object = (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any] else { return [:] }
        return object.mapValues { "\($0)" }
    }

    @Test func aCompleteDownloadThroughRangesWithAResumeInsideAChunkIsDeliveredAndARedeliveryAddsNothing() async throws {
        let fixture = try await Self.start()
        let (transaction, token) = try await Self.buy(fixture)
        try await Self.download(fixture, "README.txt", token: token)
        try await Self.download(fixture, "stages/index.json", token: token)
        // stages.bin in two ranges; the second resumes inside its first chunk.
        try await Self.download(fixture, "stages.bin", token: token, range: "bytes=0-600000")
        try await Self.download(fixture, "stages.bin", token: token, range: "bytes=600001-")
        try await Self.waitForRecord(fixture, purchase: transaction, chunks: 4)

        let payload = try await Self.requestRefund(fixture, transaction: transaction)
        let answers = await Self.answers(fixture.apple.serverAPI, count: 1)
        #expect(answers.count == 1)
        #expect(answers.first?.transactionID == transaction)
        #expect(answers.first?.bodyText
            == #"{"customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED", "consumptionPercentage": 100000, "refundPreference": "DECLINE"}"#)

        // Apple delivers the same notification again: acknowledged, nothing queued, nothing sent.
        let ledger = try #require(fixture.depot.app.ledger)
        #expect(try await fixture.notify(signedPayload: payload).status == 200)
        // The store records the call before it answers: the ledger marks it sent just after.
        _ = await Self.poll(timeout: 60) {
            (try? await ledger.consumptionAnswers(originalTransactionID: transaction).first?.state) == .sent
        }
        let recorded = try await ledger.consumptionAnswers(originalTransactionID: transaction)
        #expect(recorded.count == 1)
        #expect(recorded.first?.state == .sent)
        #expect(recorded.first?.sent?.deliveryStatus == "DELIVERED")
        try await Task.sleep(for: .seconds(ConsumptionAnswers.settle + 2))
        #expect(fixture.apple.serverAPI.consumptionRequests.count == 1)
        #expect(fixture.depot.logs.lines.joined(separator: "\n").contains("answered: DELIVERED, 100000 milliunits"))
        await fixture.stop()
    }

    @Test func halfTheChunksAreUndeliveredWithTheirShareAndNoPreference() async throws {
        let fixture = try await Self.start()
        let (transaction, token) = try await Self.buy(fixture)
        // README.txt and the first chunk of stages.bin: 2 of 4 chunks.
        try await Self.download(fixture, "README.txt", token: token)
        try await Self.download(fixture, "stages.bin", token: token, range: "bytes=0-1048575")
        try await Self.waitForRecord(fixture, purchase: transaction, chunks: 2)

        try await Self.requestRefund(fixture, transaction: transaction)
        let answers = await Self.answers(fixture.apple.serverAPI, count: 1)
        #expect(answers.count == 1)
        let share = (48 + 1_048_576) * 100_000 / Self.packBytes
        #expect(Self.fields(answers.first) == ["customerConsented": "1", "sampleContentProvided": "0",
                                               "deliveryStatus": "UNDELIVERED_OTHER", "consumptionPercentage": "\(share)"])
        await fixture.stop()
    }

    @Test func nothingSentIsAFullRefundAndAppleFailingThreeTimesGetsOneAnswer() async throws {
        let fixture = try await Self.start()
        let (transaction, _) = try await Self.buy(fixture)
        fixture.apple.serverAPI.failNext(3, with: .generalInternalRetryable, endpoint: .consumption)
        try await Self.requestRefund(fixture, transaction: transaction)
        let answers = await Self.answers(fixture.apple.serverAPI, count: 1)
        #expect(answers.count == 1)
        #expect(answers.first?.bodyText
            == #"{"customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "UNDELIVERED_OTHER", "consumptionPercentage": 0, "refundPreference": "GRANT_FULL"}"#)
        // Three refusals, then the accepted call (the client retries once per attempt).
        #expect(fixture.apple.serverAPI.calls(.consumption) == 4)
        let ledger = try #require(fixture.depot.app.ledger)
        _ = await Self.poll(timeout: 60) {
            (try? await ledger.consumptionAnswers(originalTransactionID: transaction).first?.state) == .sent
        }
        let recorded = try await ledger.consumptionAnswers(originalTransactionID: transaction)
        #expect(recorded.map(\.state) == [.sent])
        #expect(recorded.first?.attempts == 2)
        #expect(recorded.first?.sent?.refundPreference == "GRANT_FULL")
        let depot = fixture.depot
        let metrics = try await OffPool.run { try depot.get("/metrics") }.text
        #expect(metrics.contains("depot_consumption_answers_total{outcome=\"sent\"} 1"))
        #expect(metrics.contains("depot_consumption_answers_total{outcome=\"failed\"} 1"))
        await fixture.stop()
    }

    /// Apple answering that it does not know the transaction (`404`, `4040010`) ends the request at once: abandoned
    /// after that one attempt, never tried again.
    @Test func appleNotKnowingTheTransactionEndsTheRequest() async throws {
        let fixture = try await Self.start()
        let (transaction, _) = try await Self.buy(fixture)
        fixture.apple.serverAPI.failNext(1, with: .error(httpStatus: 404, errorCode: 4_040_010), endpoint: .consumption)
        try await Self.requestRefund(fixture, transaction: transaction)
        let ledger = try #require(fixture.depot.app.ledger)
        let ended = await Self.poll(timeout: 60) {
            (try? await ledger.consumptionAnswers(originalTransactionID: transaction).first?.state) == .abandoned
        }
        #expect(ended, "the request was never abandoned")
        let recorded = try await ledger.consumptionAnswers(originalTransactionID: transaction)
        #expect(recorded.map(\.state) == [.abandoned])
        #expect(recorded.first?.attempts == 1)
        // One call: the refusal is final (no retry, no later attempt).
        #expect(fixture.apple.serverAPI.calls(.consumption) == 1)
        #expect(fixture.apple.serverAPI.consumptionRequests.isEmpty)
        let depot = fixture.depot
        let metrics = try await OffPool.run { try depot.get("/metrics") }.text
        #expect(metrics.contains("depot_consumption_answers_total{outcome=\"abandoned\"} 1"))
        #expect(metrics.contains("depot_consumption_answers_total{outcome=\"sent\"} 0"))
        await fixture.stop()
    }

    /// A request is answered until 12 hours after its notification's `signedDate`: one older than that is abandoned
    /// without a call to Apple; one just inside the window, queued behind it, is answered.
    @Test func aRequestOlderThanTwelveHoursIsAbandonedUnanswered() async throws {
        let fixture = try await Self.start()
        let (transaction, _) = try await Self.buy(fixture)
        let ledger = try #require(fixture.depot.app.ledger)
        let now = Date()
        func request(_ uuid: String, age: Double) -> ConsumptionRequest {
            ConsumptionRequest(notificationUUID: uuid, transactionId: transaction, originalTransactionId: transaction,
                               productId: PurchaseFixture.level2, environment: "Production",
                               signedDate: Int64((now.timeIntervalSince1970 - age) * 1000))
        }
        #expect(try await ledger.queueConsumptionAnswer(request("stale", age: ConsumptionRequest.answerWindow + 60), now: now))
        #expect(try await ledger.queueConsumptionAnswer(request("fresh", age: ConsumptionRequest.answerWindow - 600), now: now))
        fixture.depot.app.records?.consumption?.wake()
        let answers = await Self.answers(fixture.apple.serverAPI, count: 1)
        #expect(answers.map(\.transactionID) == [transaction])
        _ = await Self.poll(timeout: 60) {
            (try? await ledger.consumptionAnswers(originalTransactionID: transaction).map(\.state)) == [.abandoned, .sent]
        }
        let recorded = try await ledger.consumptionAnswers(originalTransactionID: transaction)
        #expect(recorded.map(\.state) == [.abandoned, .sent])
        // One call to Apple, the fresh request's: the stale one was never sent.
        #expect(fixture.apple.serverAPI.calls(.consumption) == 1)
        await fixture.stop()
    }

    /// The answer is queued before the notification is acknowledged (so it survives a crash right after): with
    /// the option it is in the ledger the moment the `200` arrives, and without it nothing is, then or later.
    @Test(arguments: [true, false]) func withoutTheOptionNothingIsQueuedOrSent(option: Bool) async throws {
        let fixture = try await PurchaseFixture.start(serverAPI: true) { $0.consumptionInfo = option ? .on : .off }
        let (transaction, _) = try await Self.buy(fixture)
        try await Self.requestRefund(fixture, transaction: transaction)
        let ledger = try #require(fixture.depot.app.ledger)
        #expect(try await ledger.consumptionAnswers(originalTransactionID: transaction).count == (option ? 1 : 0))
        if option {
            #expect(await Self.answers(fixture.apple.serverAPI, count: 1).count == 1)
        } else {
            // Long enough for a queued answer to have gone out (the option's first attempt is immediate).
            try await Task.sleep(for: .seconds(2))
            #expect(fixture.apple.serverAPI.calls(.consumption) == 0)
            #expect(try await ledger.consumptionAnswers(originalTransactionID: transaction).isEmpty)
        }
        await fixture.stop()
    }

    @Test func theOptionNeedsTheDeliveryRecord() async throws {
        var configuration = DepotConfiguration()
        configuration.consumptionInfo = .on
        configuration.deliveryRecord = .off
        #expect(configuration.conflictingOptions?.option == "consumption-info")
        // Refused before anything is opened or checked (the directories of a default configuration need not exist).
        await #expect {
            _ = try await DepotApp.start(configuration, logger: Logger(output: LogOutput(capturing: true)))
        } throws: { error in
            (error as? ConfigurationError)?.description.contains("--delivery-record") == true
        }
        configuration.deliveryRecord = .on
        #expect(configuration.conflictingOptions == nil)
    }

    @Test func theOptionNeedsAnInAppPurchaseKey() async throws {
        var configuration = DepotConfiguration()
        configuration.consumptionInfo = .on
        #expect {
            _ = try ServerAPISettings.resolve(configuration)
        } throws: { error in
            (error as? ConfigurationError)?.option == "consumption-info"
        }
    }
}
