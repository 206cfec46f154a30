import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// The steps of the browser test, with the checks between them.
struct BrowserJourney {
    let browser: WebDriverSession
    let depot: TestDepot
    let proxy: CuttingProxy
    let shots: TemporaryDirectory

    var page: String { "http://127.0.0.1:\(proxy.port)/admin/" }
    var http: ConsoleHTTP { ConsoleHTTP(port: depot.port) }
    static let adminToken = ConsoleSignInTests.adminToken

    func run() async throws {
        try await signIn()
        try await products()
        let version = try await uploadWithACut()
        try await stageAndPromote(version)
        try await rollBack(from: version)
        try await retire()
        try await traffic()
        try await phoneSized()
        try await credentialsStayOutOfThePage()
        try await signOut()
    }

    /// Everything the browser logged since the last look: no error but the `expected` ones.
    func expectCleanLog(allowing expected: [String] = [], _ step: String) async throws {
        let entries = try await browser.log()
        let problems = entries.filter { $0.level == "SEVERE" || $0.level == "WARNING" }
            .filter { entry in !expected.contains { entry.message.contains($0) } }
        #expect(problems.isEmpty, "browser log after \(step): \(problems)")
    }

    func screenshot(_ name: String) async throws {
        try await browser.screenshot(to: shots.path + "/\(name).png")
    }

    /// Copies the screenshots to `$DEPOT_CONSOLE_SCREENSHOTS` when set (to look at them after the run).
    func keepScreenshots() {
        guard let keep = ProcessInfo.processInfo.environment["DEPOT_CONSOLE_SCREENSHOTS"] else { return }
        try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: shots.path)) ?? [] {
            try? FileManager.default.removeItem(atPath: keep + "/" + name)
            try? FileManager.default.copyItem(atPath: shots.path + "/" + name, toPath: keep + "/" + name)
        }
    }

    func text(_ selector: String) async throws -> String {
        _ = try await browser.element(selector)
        return try await browser.run("return document.querySelector(arguments[0]).textContent", [selector]) as? String ?? ""
    }

    /// Clicks a button that opens the confirmation, checks what it says, and confirms.
    func confirm(after selector: String, saying expected: String) async throws {
        try await browser.click(selector)
        try await browser.wait(until: "return document.getElementById('confirm').open", "the confirmation")
        let said = try await text("#confirm-text")
        #expect(said.contains(expected), "confirmation says: \(said)")
        try await browser.click("#confirm-ok")
    }

    func signIn() async throws {
        try await browser.open(page)
        _ = try await browser.element("#sign-in-token")
        try await screenshot("1-sign-in")
        try await expectCleanLog("the page loaded")
        try await browser.type("#sign-in-token", "not-the-admin-token-at-all")
        try await browser.click("#sign-in-form button")
        try await browser.wait(until: "return document.getElementById('sign-in-error').textContent.length > 0", "the refusal")
        #expect(try await text("#sign-in-error").contains("not the admin token"))
        #expect(try await browser.run("return document.body.dataset.signedIn") as? String == "false")
        try await expectCleanLog(allowing: ["/admin/session - Failed to load resource: the server responded with a status of 401"], "a wrong token")
        // The keyboard alone: the token typed, then Enter.
        try await browser.type("#sign-in-token", Self.adminToken + "\u{E007}")
        try await browser.wait(until: "return document.body.dataset.signedIn === 'true'", "signed in")
        #expect(try await browser.run("return document.getElementById('sign-in-token').value") as? String == "")
    }

    func products() async throws {
        _ = try await browser.element("#products-table tr[data-product='com.example.depot.level2']")
        let row = try await text("#products-table tr[data-product='com.example.depot.level2']")
        #expect(row.contains("non-consumable") && row.contains("Level 2: Glacier") && row.contains("level2") && row.contains("live"), "\(row)")
        try await screenshot("2-products")
        try await expectCleanLog("the products")
    }

    /// Uploads three files (20 MB) into the next version of `level2`; the proxy cuts the connections once 9 MB
    /// went through, and the page continues from what the server holds. Returns the version.
    func uploadWithACut() async throws -> Int {
        try await browser.run("location.hash = '#packs'")
        try await browser.click("#packs-table tr[data-pack='level2'] button")
        _ = try await browser.element("#upload-input")
        let version = Int(try await browser.run("return document.getElementById('upload-version').value") as? String ?? "") ?? 0
        #expect(version == 2)
        let sources = TemporaryDirectory("console-upload")
        let sizes = ["stages.bin": 9_000_000, "music.ogg": 7_000_000, "readme.txt": 4_000_000]
        var contents: [String: [UInt8]] = [:]
        for (name, size) in sizes {
            var generator = SystemRandomNumberGenerator()
            contents[name] = (0..<size / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
            sources.write(name, contents[name]!)
        }
        try await browser.run("window.uploadEvents = []; window.addEventListener('depot-upload', (e) => window.uploadEvents.push(e.detail));")
        try await browser.type("#upload-input", sizes.keys.sorted().map { sources.path + "/" + $0 }.joined(separator: "\n"))
        try await browser.wait(until: "return document.querySelectorAll('#upload-files li').length === 3", "three files listed")
        proxy.cut(afterClientBytes: 9_000_000)
        try await browser.click("#upload-start")
        try await browser.wait(until: "return window.uploadEvents.filter((e) => e.type === 'progress').length > 3", "progress")
        try await screenshot("3-upload-in-progress")
        try await browser.wait(until: "return window.uploadEvents.some((e) => e.type === 'done')", timeout: 150, "the upload's end")
        #expect(proxy.cutCount == 1)
        let events = try await browser.run("return window.uploadEvents.map((e) => [e.type, e.path ?? '', e.offset ?? e.sent ?? 0, e.total ?? 0])") as? [[Any]] ?? []
        let kinds = events.compactMap { $0.first as? String }
        #expect(kinds.filter { $0 == "progress" }.count >= 10, "\(kinds)")
        // The page sees the dropped connection as a network error ("interrupted"), or Chromium retries the
        // request on its own and the server's 409 says where its copy ends: either way the upload continues
        // from there, in the middle of a piece (the bytes that arrived before the cut are not sent again).
        let resumed = events.filter { $0.first as? String == "resumed" }
        #expect(resumed.contains { ($0[2] as? Int ?? 0) > 0 && ($0[2] as? Int ?? 0) % (4 << 20) != 0 },
                "resumed where the server's copy ended: \(events.filter { $0.first as? String != "progress" })")
        let progress = events.filter { $0.first as? String == "progress" }
        let totals = progress.compactMap { $0[3] as? Int }
        #expect(totals.count == progress.count && totals.allSatisfy { $0 == 20_000_000 }, "\(totals.prefix(5))")
        #expect(try await text("#upload-figures").contains("left"))
        for (name, bytes) in contents {
            #expect(FileManager.default.contents(atPath: depot.contentDirectory + "/.staging/uploads/level2/\(version)/\(name)") == Data(bytes), "\(name)")
        }
        try await screenshot("4-uploaded")
        try await expectCleanLog(allowing: ["net::ERR_", "Failed to load resource"], "the cut upload")
        return version
    }

    func liveVersion() async throws -> Int? {
        let list = try await http.send("GET", "/products_v2.json")
        let products = (ConsoleHTTP.json(list)["products"] as? [[String: Any]]) ?? []
        let level2 = products.first { $0["id"] as? String == "com.example.depot.level2" }
        return (level2?["pack"] as? [String: Any])?["version"] as? Int
    }

    func waitForLive(_ version: Int) async throws {
        for _ in 0..<100 {
            if try await liveVersion() == version { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(Bool(false), "products_v2.json never showed version \(version)")
    }

    func stageAndPromote(_ version: Int) async throws {
        try await confirm(after: "#publish-stage", saying: "not live")
        try await browser.wait(until: "return !!document.querySelector(\"#versions-table tr[data-version='\(version)'][data-state='staged']\")", "the staged row")
        #expect(try await liveVersion() == 1, "staging leaves the lists alone")
        try await screenshot("5-staged")
        try await confirm(after: "#versions-table tr[data-version='\(version)'] button[data-action='promote']", saying: "becomes live instead of version 1")
        try await browser.wait(until: "return !!document.querySelector(\"#versions-table tr[data-version='\(version)'][data-state='live']\")", "the live row")
        try await waitForLive(version)
        try await expectCleanLog("staging and promoting")
    }

    func rollBack(from version: Int) async throws {
        try await confirm(after: "#versions-table tr[data-version='1'] button[data-action='rollback']", saying: "version 1's files becomes live")
        try await browser.wait(until: "return !!document.querySelector(\"#versions-table tr[data-version='\(version + 1)'][data-state='live']\")", "the rollback")
        try await waitForLive(version + 1)
        try await screenshot("6-rolled-back")
        try await expectCleanLog("the rollback")
    }

    func retire() async throws {
        try await browser.run("location.hash = '#products'")
        try await confirm(after: "#products-table tr[data-product='com.example.depot.level2'] button[data-action='retire']", saying: "keep their access")
        try await browser.wait(until: "return document.querySelector(\"#products-table tr[data-product='com.example.depot.level2'] [data-field='status']\")?.textContent === 'retired'", "retired")
        for _ in 0..<100 where try await http.send("GET", "/products_v1.json").text.contains("com.example.depot.level2") {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!(try await http.send("GET", "/products_v1.json").text.contains("com.example.depot.level2")))
        try await screenshot("7-retired")
        try await expectCleanLog("retiring")
    }

    func traffic() async throws {
        // Downloads the page did not make: the charts must count them as /metrics does.
        let token = try OperatorTokens.issue(pack: "level2", ttl: 600, account: nil, secret: "test-secret-test-secret-test-secret-0123",
                                             dataDirectory: depot.dataDirectory)
        for _ in 0..<3 { _ = try await http.send("GET", "/v1/packs/level2/1/files/README.txt", [("Authorization", "Bearer \(token)")]) }
        try await browser.run("location.hash = '#traffic'")
        _ = try await browser.element(".card[data-metric='downloads']")
        try await browser.run("window.trafficSeen = document.getElementById('traffic-updated').textContent")
        let metrics = try await http.send("GET", "/metrics").text
        func sum(_ prefix: String, _ keep: (Substring) -> Bool = { _ in true }) -> Int {
            metrics.split(separator: "\n").filter { $0.hasPrefix(prefix) && keep($0) }.compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(0, +)
        }
        let downloads = try await browser.run("return document.querySelector(\".card[data-metric='downloads']\").dataset.value") as? String
        #expect(Int(downloads ?? "") == sum("depot_http_requests_total{route=\"pack_file\"", { $0.contains("\"200\"") || $0.contains("\"206\"") }))
        #expect(Int(downloads ?? "") ?? 0 >= 3)
        let apple = try await browser.run("return document.querySelector(\".card[data-metric='appleCalls']\").dataset.value") as? String
        #expect(Int(apple ?? "") == sum("depot_apple_requests_total{"))
        let requests = Int(try await browser.run("return document.querySelector(\".card[data-metric='requests']\").dataset.value") as? String ?? "") ?? 0
        #expect(requests > 0 && requests <= sum("depot_http_requests_total{"))
        #expect(try await browser.run("return document.querySelectorAll('.card svg rect.bar').length") as? Int ?? 0 >= 5)
        #expect(Int(try await browser.run("return document.getElementById('disk').dataset.reserve") as? String ?? "") ?? 0 > 0)
        try await screenshot("8-traffic")
        // It refreshes by itself.
        try await browser.wait(until: "return document.getElementById('traffic-updated').textContent !== window.trafficSeen", timeout: 20, "a refresh")
        try await browser.click("button[data-span='day']")
        try await browser.wait(until: "return !!document.querySelector(\".card[data-window='day']\")", "the day's charts")
        try await expectCleanLog("the traffic page")
    }

    func phoneSized() async throws {
        try await browser.resize(width: 390, height: 844)
        for view in ["products", "packs", "traffic"] {
            try await browser.run("location.hash = '#\(view)'")
            _ = try await browser.element("#view-\(view) h2")
            try await Task.sleep(for: .milliseconds(300))
            let overflow = try await browser.run("return document.documentElement.scrollWidth - document.documentElement.clientWidth") as? Int ?? 99
            #expect(overflow <= 1, "\(view) is wider than a phone's screen by \(overflow) px")
            try await screenshot("9-phone-\(view)")
        }
        try await browser.resize(width: 1280, height: 900)
        try await expectCleanLog("the phone-sized pages")
    }

    func credentialsStayOutOfThePage() async throws {
        let storage = try await browser.run("return JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie, location.href, history.length])") as? String ?? ""
        #expect(!storage.contains(Self.adminToken), "\(storage)")
        #expect(!storage.contains("depot_session"), "the session cookie is HttpOnly: \(storage)")
        depot.app.logger.output.flush()
        let logs = depot.logs.lines
        #expect(!logs.isEmpty)
        #expect(!logs.contains { $0.contains(Self.adminToken) })
    }

    func signOut() async throws {
        try await browser.click("#sign-out")
        try await browser.wait(until: "return document.body.dataset.signedIn === 'false'", "signed out")
        try await browser.open(page)
        _ = try await browser.element("#sign-in-token")
        #expect(try await browser.run("return document.body.dataset.signedIn") as? String == "false")
        try await expectCleanLog("signing out")
    }
}
