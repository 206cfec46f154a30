import AppStoreSimulator
import DepotTestSupport
import DepotWire
import Foundation
import Testing

extension ScaleOutTests {
    /// scale-out §1 and §3 with real parts: a `depot serve` whose PostgreSQL stops while it serves, and `--ledger`
    /// values the server refuses at start-up.
    @Suite(.serialized) struct ScaleOutOutageTests {
        static let stages = WirePath.packFile(pack: "level2", version: 1, path: "stages.bin")

        /// The health answer on `port`: its status and the decoded report.
        static func health(_ port: Int) async throws -> (status: Int, report: HealthReport?) {
            let answer = try await ScaleOutCluster.get(port, WirePath.health.pattern)
            return (answer.status, try? JSONDecoder().decode(HealthReport.self, from: Data(answer.body)))
        }

        /// PostgreSQL stopped under a running instance: writes answer `503 ledger_unavailable` with `Retry-After` and
        /// record nothing; lists, manifests and downloads keep serving until the state is `--ledger-stale-max` old,
        /// then downloads are `503` too; `/healthz` is `200 degraded` with the ledger's part and `depot_ledger_up` 0.
        /// PostgreSQL back: everything is as before without a restart.
        @Test func postgresStoppedWhileServing() async throws {
            let postgres = try await PostgresCluster.start(durable: false)
            do {
                try await Self.stopPostgres(postgres)
            } catch {
                try? await postgres.destroy()
                throw error
            }
            try await postgres.destroy()
        }

        /// `depot_ledger_state_age_seconds` on `port`: how old the instance's last confirmed ledger state is.
        static func stateAge(_ port: Int) async throws -> Double {
            try #require(try await ScaleOutCluster.metrics(port)["depot_ledger_state_age_seconds"], "no state age in /metrics")
        }

        private static func stopPostgres(_ postgres: PostgresCluster) async throws {
            let staleMax = 4.0
            try await ScaleOutCluster.run(instances: 1, postgres: postgres, extraArguments: ["--ledger-stale-max", "4"]) { cluster in
                let port = cluster.instances[0].port
                let bought = try await cluster.purchase(cluster.transaction(), through: port)
                let token = try #require(bought.token, "\(bought.summary)")
                let healthy = try await Self.health(port)
                #expect(healthy.status == 200 && healthy.report?.status == "ok")
                #expect(healthy.report?.ledger == HealthReport.LedgerState(status: "ok", backend: "postgres"))
                #expect(try await ScaleOutCluster.metrics(port)["depot_ledger_up"] == 1)

                try await postgres.stop(mode: .fast)
                let stopped = ContinuousClock.now
                // Within --ledger-stale-max of the last confirmed state: the file is served. What the spec times is
                // the age of the instance's last confirmed state (its /metrics gauge), not the time since the test's
                // stop command returned: read after the request, it is at least the age the server judged by.
                let early = try await ScaleOutCluster.fileStatus(port, token: token)
                let earlyAge = try await Self.stateAge(port)
                if earlyAge < staleMax { #expect(early.status == 200, "state \(earlyAge) s old: \(early.summary)") }

                let degraded = try await eventually(within: 10) { try await Self.health(port).report?.status == "degraded" }
                #expect(degraded, "/healthz never said degraded")
                let health = try await Self.health(port)
                #expect(health.status == 200)
                #expect(health.report?.ledger == HealthReport.LedgerState(status: "unavailable", backend: "postgres"))
                #expect(health.report?.reasons.contains { $0.contains("ledger") } == true, "\(String(describing: health.report?.reasons))")
                #expect(try await ScaleOutCluster.metrics(port)["depot_ledger_up"] == 0)

                // Writes: refused, nothing acknowledged.
                let unrecorded = cluster.transaction()
                let receipt = try await cluster.purchase(unrecorded, through: port)
                #expect(receipt.status == 503 && receipt.errorCode == "ledger_unavailable", "\(receipt.summary)")
                #expect(Int(receipt.header("Retry-After") ?? "") ?? 0 >= 1)
                let notification = try await ScaleOutCluster.post(port, WirePath.notifications.pattern,
                                                                  json: try cluster.notification(.refund, about: unrecorded))
                #expect(notification.status == 503 && notification.errorCode == "ledger_unavailable", "\(notification.summary)")
                #expect(Int(notification.header("Retry-After") ?? "") ?? 0 >= 1)
                // Reads that need no ledger keep serving.
                #expect(try await ScaleOutCluster.get(port, WirePath.productsV2.pattern).status == 200)
                let manifest = try await ScaleOutCluster.get(port, WirePath.versionManifest(pack: "level2", version: 1), token: token)
                #expect(manifest.status == 200, "\(manifest.summary)")

                // Past --ledger-stale-max: downloads refused, with Retry-After. Each probe reads the state's age
                // before and after its request: a download served although the state was older than
                // --ledger-stale-max before the request, or refused while it was younger after it, breaks the spec.
                var refusedAtAge: Double?
                var servedAtAge: Double?
                let deadline = stopped + .seconds(staleMax + 30)
                while ContinuousClock.now < deadline {
                    let before = try await Self.stateAge(port)
                    let status = try await ScaleOutCluster.fileStatus(port, token: token).status
                    let after = try await Self.stateAge(port)
                    if status == 503 {
                        refusedAtAge = after
                        break
                    }
                    if before > staleMax {
                        servedAtAge = before
                        break
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let refusedAfter = Double((ContinuousClock.now - stopped) / .milliseconds(1)) / 1000
                #expect(servedAtAge == nil, "a download was served with the state \(servedAtAge ?? 0) s old (--ledger-stale-max 4)")
                let refusal = try #require(refusedAtAge, "downloads still served \(refusedAfter) s after the stop")
                #expect(refusal >= staleMax, "downloads refused with the state \(refusal) s old, before --ledger-stale-max")
                let stale = try await ScaleOutCluster.fileStatus(port, token: token)
                #expect(stale.status == 503 && stale.errorCode == "ledger_unavailable" && stale.header("Retry-After") != nil, "\(stale.summary)")

                // PostgreSQL back: no restart of Depot.
                try await postgres.restart()
                let recovered = try await eventually(within: 20) { try await Self.health(port).report?.status == "ok" }
                #expect(recovered, "/healthz never said ok again")
                #expect(try await ScaleOutCluster.metrics(port)["depot_ledger_up"] == 1)
                let recorded = try await postgres.sql("SELECT count(*) FROM transactions WHERE transaction_id = '\(unrecorded.transactionId)'",
                                                      database: cluster.database)
                #expect(recorded == "0", "a refused purchase was recorded")
                let again = try await cluster.purchase(unrecorded, through: port)
                #expect(again.status == 200 && again.token != nil, "\(again.summary)")
                #expect(try await ScaleOutCluster.fileStatus(port, token: token).status == 200)
                #expect(cluster.instances[0].process?.exitStatus == nil)
            }
        }

        /// `--ledger` values `depot serve` refuses: one line naming `--ledger`, exit 1, no password in the output.
        @Test func badLedgerValuesAreConfigurationErrors() async throws {
            let postgres = try await PostgresCluster.shared()
            let database = try await postgres.createDatabase()
            let refusing = try RefusingPort()
            let tree = TemporaryDirectory("depot-bad-ledger")
            try await TestDepot.copySample(into: tree.path)
            let secret = "Hunter2-Secret-Password"
            let cases: [(String, String)] = [
                ("malformed", "postgres://depot:\(secret)@[::1/\(database)"),
                ("unknown scheme", "mysql://depot:\(secret)@127.0.0.1/\(database)"),
                ("wrong password", postgres.uri(database: database, password: secret)),
                ("unreachable host", "postgres://depot:\(secret)@127.0.0.1:\(refusing.port)/\(database)"),
                ("missing database", "postgres://depot:\(postgres.password)@127.0.0.1:\(postgres.port)/no_such_database_here"),
            ]
            for (name, value) in cases {
                let arguments = ["serve", "--port", "0", "--host", "127.0.0.1", "--catalog", tree.path + "/catalog",
                                 "--content", tree.path + "/content", "--data", tree.path + "/data", "--ledger", value]
                let result = try await OffPool.run { try SpawnedProcess.run(ProcessRunner.depotExecutable, arguments) }
                let output = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(result.status == 1, "\(name): exit \(result.status): \(output)")
                #expect(output.contains("--ledger") && !output.contains("\n"), "\(name): \(output)")
                #expect(!output.contains(secret) && !output.contains(postgres.password), "\(name) shows the password: \(output)")
                #expect(!output.contains("listening on"), "\(name): \(output)")
            }
            try await postgres.dropDatabase(database)
        }
    }
}
