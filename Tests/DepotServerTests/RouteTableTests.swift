import DepotServer
import DepotTestSupport
import DepotWire
import HTTP
import Server
import Testing

/// The route table without a server: the most specific template wins, `404`/`405`+`Allow` come from the table,
/// an area's check runs before anything else, what a handler throws is mapped, bad tables are refused.
@Suite struct RouteTableTests {
    /// A handler answering `200` with `name` as its body.
    static func answer(_ name: String) -> Route.Handler {
        { _ in .reply(.response(Response(status: 200, body: .bytes(Array(name.utf8)), route: "test"))) }
    }

    static func table() throws -> RouteTable {
        var builder = RouteTableBuilder()
        builder.area(PathTemplate("/guarded/{rest*}"), .admin) { head in
            head.fields.first("authorization") == "yes" ? nil : AdminFailure.unauthorized
        }
        builder.area(WirePath.packsArea, .packs)
        builder.add([.get], WirePath.packManifest, .packManifest, answer("redirect"))
        builder.add([.get], WirePath.versionManifest, .packManifest, answer("manifest"))
        builder.add([.get], WirePath.packFile, .packFile) { request in
            .reply(.response(Response(status: 200, body: .bytes(Array(request.parameter("path").utf8)), route: "test")))
        }
        builder.add([.get], WirePath.packsArea, .packs, answer("rest"))
        builder.add([.post], WirePath.receipts, .receipts, answer("receipts"))
        builder.add([.get], WirePath.health, .healthz, answer("health"))
        builder.add([.put], PathTemplate("/guarded/{thing}"), .adminUpload, answer("put"))
        builder.add([.delete], PathTemplate("/guarded/{thing}"), .adminUpload, answer("delete"))
        builder.add([.get], PathTemplate("/thrower/{kind}"), .metrics) { request in
            switch request.parameter("kind") {
            case "token": throw TokenRejection.expired
            case "plain": throw CancellationLikeError()
            default: return .reply(.response(Response(status: 204)))
            }
        }
        return try builder.build()
    }

    struct CancellationLikeError: Error {}

    static func resolve(_ table: RouteTable, _ method: HTTPMethod, _ target: String, authorization: String? = nil) throws -> Response {
        var fields = HTTPFields()
        if let authorization { fields.append("Authorization", authorization) }
        let head = RequestHead(method: method, target: target, fields: fields)
        let requestTarget = RequestTarget(target)
        guard case .reply(.response(let response)) = table.handle(head, target: requestTarget, segments: try requestTarget.pathSegments(), loop: 0)
        else { throw RawHTTPConnection.Failure(description: "not an immediate response") }
        return response
    }

    static func body(_ response: Response) -> String {
        if case .bytes(let bytes) = response.body { return String(decoding: bytes, as: UTF8.self) }
        return ""
    }

    @Test(arguments: [
        ("/v1/packs/level2/manifest", "redirect"),
        ("/v1/packs/level2/7/manifest", "manifest"),
        ("/v1/packs/manifest/manifest", "redirect"),
        ("/v1/packs/level2/7/files/a/b%20c", "a/b c"),
        ("/v1/packs/level2/7/files", ""),
        ("/v1/packs/level2", "rest"),
        ("/v1/packs/level2/7/other", "rest"),
        ("/v1/packs/", "rest"),
    ])
    func theMostSpecificTemplateWins(_ target: String, _ expected: String) throws {
        let response = try Self.resolve(try Self.table(), .get, target)
        #expect(response.status == 200)
        #expect(Self.body(response) == expected)
    }

    @Test func headIsAnsweredWhereverGetIs() throws {
        let table = try Self.table()
        #expect(Self.body(try Self.resolve(table, .head, "/healthz")) == "health")
        #expect(try Self.resolve(table, .head, "/v1/receipts").status == 405)
    }

    @Test(arguments: [
        (HTTPMethod.post, "/healthz", "GET, HEAD", "healthz"),
        (.options, "/healthz", "GET, HEAD", "healthz"),
        (.other("BREW"), "/healthz", "GET, HEAD", "healthz"),
        (.get, "/v1/receipts", "POST", "receipts"),
        // Inside an area, the area's label.
        (.post, "/v1/packs/level2/1/manifest", "GET, HEAD", "packs"),
        (.post, "/v1/packs/anything/at/all", "GET, HEAD", "packs"),
        (.get, "/guarded/x", "PUT, DELETE", "admin"),
    ])
    func wrongMethodIs405WithAllow(_ method: HTTPMethod, _ target: String, _ allow: String, _ label: String) throws {
        let response = try Self.resolve(try Self.table(), method, target, authorization: "yes")
        #expect(response.status == 405)
        #expect(response.headers.first("allow") == allow)
        #expect(response.route == label)
        #expect(Self.body(response).contains("\"method_not_allowed\""))
    }

    @Test(arguments: [("/nope", "other"), ("/healthz/x", "other"), ("/v1/packs", "other"), ("/", "other"), ("/guarded/a/b", "admin")])
    func unknownPathsAre404(_ target: String, _ label: String) throws {
        for method in [HTTPMethod.get, .post, .delete] {
            let response = try Self.resolve(try Self.table(), method, target, authorization: "yes")
            #expect(response.status == 404, "\(method) \(target)")
            #expect(response.route == label)
            #expect(Self.body(response).contains("\"not_found\""))
        }
    }

    /// Without the area's credential nothing is revealed, not even which paths or methods exist.
    @Test(arguments: ["/guarded", "/guarded/x", "/guarded/a/b"])
    func theAreaCheckRunsFirst(_ target: String) throws {
        let table = try Self.table()
        for method in [HTTPMethod.get, .put, .post] {
            let response = try Self.resolve(table, method, target)
            #expect(response.status == 401)
            #expect(response.route == "admin")
            #expect(response.headers.first("www-authenticate") == "Bearer")
        }
        #expect(Self.body(try Self.resolve(table, .put, "/guarded/x", authorization: "yes")) == "put")
        #expect(Self.body(try Self.resolve(table, .delete, "/guarded/x", authorization: "yes")) == "delete")
    }

    @Test func whatAHandlerThrowsIsMappedUnderItsLabel() throws {
        let table = try Self.table()
        let token = try Self.resolve(table, .get, "/thrower/token")
        #expect(token.status == 401)
        #expect(token.route == "metrics")
        #expect(Self.body(token).contains("\"token_expired\""))
        let plain = try Self.resolve(table, .get, "/thrower/plain")
        #expect(plain.status == 500)
        #expect(Self.body(plain).contains("\"internal_error\""))
        #expect(try Self.resolve(table, .get, "/thrower/none").status == 204)
    }

    @Test func aSubsetServesOnlyItsRoutes() throws {
        let full = try Self.table()
        let ops = try full.subset([.healthz])
        #expect(ops.labels == [.healthz])
        #expect(Self.body(try Self.resolve(ops, .get, "/healthz")) == "health")
        #expect(try Self.resolve(ops, .post, "/v1/receipts").status == 404)
        #expect(try Self.resolve(ops, .get, "/v1/packs/level2/manifest").status == 404)
        // The areas stay: the check still runs first there.
        #expect(try Self.resolve(ops, .get, "/guarded/x").status == 401)
    }

    @Test func badTablesAreRefusedAtBuild() {
        func problem(_ declare: (inout RouteTableBuilder) -> Void) -> String? {
            var builder = RouteTableBuilder()
            declare(&builder)
            do { _ = try builder.build(); return nil } catch { return error.description }
        }
        #expect(problem { _ in } == nil)
        #expect(problem { $0.add([.get], PathTemplate("/a/{b"), .other, Self.answer("x")) }?.contains("/a/{b") == true)
        #expect(problem { $0.add([], PathTemplate("/a"), .other, Self.answer("x")) }?.contains("without methods") == true)
        #expect(problem {
            $0.add([.get], PathTemplate("/a/{x}"), .other, Self.answer("x"))
            $0.add([.get, .post], PathTemplate("/a/{x}"), .other, Self.answer("y"))
        }?.contains("two routes for GET") == true)
        #expect(problem {
            $0.add([.get], PathTemplate("/a/{x}"), .other, Self.answer("x"))
            $0.add([.post], PathTemplate("/a/{y}"), .other, Self.answer("y"))
        }?.contains("match the same paths") == true)
        #expect(problem { $0.area(PathTemplate("admin/{rest*}"), .admin) } != nil)
    }

    @Test func allowListsMethodsInDeclarationOrderWithHeadAfterGet() {
        let routes = [Route([.put], PathTemplate("/a"), .other, Self.answer("")), Route([.get, .post], PathTemplate("/a"), .other, Self.answer(""))]
        #expect(RouteTableBuilder.allow(routes) == "PUT, GET, HEAD, POST")
        #expect(RouteTableBuilder.allow([Route([.get, .head], PathTemplate("/a"), .other, Self.answer(""))]) == "GET, HEAD")
    }
}
