import Foundation
import Testing
import Ledger

@Suite struct LedgerLocationTests {
    @Test func sqliteForms() throws {
        #expect(try LedgerLocation(parsing: "sqlite") == .sqlite(path: nil))
        #expect(try LedgerLocation(parsing: "sqlite:/srv/depot/ledger.db") == .sqlite(path: "/srv/depot/ledger.db"))
        #expect(try LedgerLocation(parsing: "sqlite:relative.db").sqlitePath(dataDirectory: "/d") == "relative.db")
        #expect(LedgerLocation.sqlite(path: nil).sqlitePath(dataDirectory: "/var/depot") == "/var/depot/ledger.sqlite")
        #expect(LedgerLocation.sqlite(path: nil).backend == .sqlite)
        #expect(LedgerLocation.sqlite(path: "/x").description == "sqlite:/x")
    }

    @Test func postgresURIWithEverything() throws {
        let location = try LedgerLocation(parsing: "postgres://depot:s%40cret%2Fpw@db.example.com:6432/ledger?sslmode=require&connect_timeout=3")
        guard case .postgres(let postgres) = location else { Issue.record("not postgres"); return }
        #expect(location.backend == .postgres)
        #expect(postgres.user == "depot")
        #expect(postgres.password == "s@cret/pw")
        #expect(postgres.endpoints == [.init(host: "db.example.com", port: 6432)])
        #expect(postgres.database == "ledger")
        #expect(postgres.parameters == ["sslmode": "require", "connect_timeout": "3"])
        let parameters = Dictionary(uniqueKeysWithValues: postgres.connectionParameters(application: "t").map { ($0.key, $0.value) })
        #expect(parameters["host"] == "db.example.com")
        #expect(parameters["port"] == "6432")
        #expect(parameters["password"] == "s@cret/pw")
        #expect(parameters["sslmode"] == "require")
        #expect(parameters["connect_timeout"] == "3") // the URI wins over the default
        #expect(parameters["fallback_application_name"] == "t")
        #expect(parameters["tcp_user_timeout"] != nil)
        #expect(location.description == "postgres://depot@db.example.com:6432/ledger?connect_timeout=3&sslmode=require")
        #expect(!location.description.contains("cret"))
    }

    @Test func postgresqlSchemeSocketDirectoryIPv6AndSeveralHosts() throws {
        let socket = try PostgresLocation(parsing: "postgresql://depot@/ledger?host=/run/postgresql")
        #expect(socket.endpoints == [.init(host: "", port: nil)])
        let socketParameters = Dictionary(uniqueKeysWithValues: socket.connectionParameters(application: "t").map { ($0.key, $0.value) })
        #expect(socketParameters["host"] == "/run/postgresql")
        #expect(socketParameters["password"] == nil)

        let encodedSocket = try PostgresLocation(parsing: "postgres://depot@%2Frun%2Fpostgresql/ledger")
        #expect(encodedSocket.endpoints == [.init(host: "/run/postgresql", port: nil)])

        let v6 = try PostgresLocation(parsing: "postgres://depot@[::1]:5433/ledger")
        #expect(v6.endpoints == [.init(host: "::1", port: 5433)])
        #expect(v6.description == "postgres://depot@[::1]:5433/ledger")

        let several = try PostgresLocation(parsing: "postgres://depot@a:5432,b/ledger?target_session_attrs=read-write")
        let parameters = Dictionary(uniqueKeysWithValues: several.connectionParameters(application: "t").map { ($0.key, $0.value) })
        #expect(parameters["host"] == "a,b")
        #expect(parameters["port"] == "5432,")
        #expect(parameters["target_session_attrs"] == "read-write")
    }

    static let malformed: [String] = [
        "", "mysql://depot@h/db", "sqlite:", "postgres://", "postgres://depot:pw@h", "postgres://depot:pw@h/",
        "postgres://depot:pw@h:0/db", "postgres://depot:pw@h:65536/db", "postgres://depot:pw@h:54x2/db",
        "postgres://depot:pw@/db", "postgres://:pw@h/db", "postgres://depot:pw@h/db?sslmode",
        "postgres://depot:pw@h/db?no_such_option=1", "postgres://depot:pw@h/db#x", "postgres://depot:p w@h/db",
        "postgres://depot:pw@[::1/db", "postgres://depot:%zz@h/db", "postgres://depot:pw@h/db?port=99999",
    ]

    @Test(arguments: malformed)
    func malformedValuesAreOneLineErrorsWithoutThePassword(_ text: String) {
        do {
            let location = try LedgerLocation(parsing: text)
            Issue.record("parsed \(location)")
        } catch {
            guard case .invalidLocation(let message) = error else { Issue.record("\(error)"); return }
            #expect(!message.isEmpty)
            #expect(!message.contains("\n"))
            #expect(!message.contains("pw"), "\(message)")
            #expect(!message.contains("--ledger"), "the server adds the option name")
        }
    }

    @Test func redactRemovesEveryPasswordForm() throws {
        let location = try PostgresLocation(parsing: "postgres://depot:Top%2FSecret1@h/db?password=Other-Secret2")
        let message = location.redact("failed for Top/Secret1, Top%2FSecret1 and Other-Secret2")
        #expect(!message.contains("Secret"))
        #expect(!location.description.contains("Secret"))
    }
}
