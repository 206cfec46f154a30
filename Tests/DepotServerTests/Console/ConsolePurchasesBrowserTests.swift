import AppStoreSimulator
import DepotServer
import DepotTestSupport
import DepotWire
import Foundation
import Testing

/// Issue 16 item 4 in a real headless Chromium: a purchase made through the simulated App Store is found by its
/// transaction and by its account, revoked with a confirmation that says what changes (its token then `403
/// revoked`), and restored (the token honoured again); a screenshot of each state, the page phone-sized, and
/// no JavaScript error or failed request in the browser's log.
@Suite("Console: purchases in a real browser", .serialized)
struct ConsolePurchasesBrowserTests {
    static let adminToken = ConsoleSignInTests.adminToken

    @Test(.timeLimit(.minutes(5))) func aSupporterFindsAPurchaseRevokesAndRestoresIt() async throws {
        try await PurchaseFixture.run(configure: { $0.adminToken = Self.adminToken }) { fixture in
            let purchase = PurchaseFixture.purchase()
            let bought = try await fixture.postReceipt(fixture.apple.issueReceipt([purchase]), account: "player-7")
            let token = try #require(bought.token, "\(bought.summary)")
            let chromium = try await Chromium.start()
            let browser = try await WebDriverSession.start(chromium)
            let shots = TemporaryDirectory("console-purchase-screenshots")
            do {
                try await Self.journey(browser, fixture: fixture, purchase: purchase.transactionID, token: token, shots: shots)
            } catch {
                try? await browser.screenshot(to: shots.path + "/failure.png")
                let said = try? await browser.run("return document.getElementById('status').textContent")
                Issue.record("the page said: \(String(describing: said)); browser log: \(String(describing: try? await browser.log()))")
                Self.keep(shots)
                await browser.close()
                await chromium.stop()
                throw error
            }
            Self.keep(shots)
            await browser.close()
            await chromium.stop()
        }
    }

    /// Copies the screenshots to `$DEPOT_CONSOLE_SCREENSHOTS` when set (as `ConsoleBrowserTests` does).
    static func keep(_ shots: TemporaryDirectory) {
        guard let keep = ProcessInfo.processInfo.environment["DEPOT_CONSOLE_SCREENSHOTS"] else { return }
        try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: shots.path)) ?? [] {
            try? FileManager.default.removeItem(atPath: keep + "/purchases-" + name)
            try? FileManager.default.copyItem(atPath: shots.path + "/" + name, toPath: keep + "/purchases-" + name)
        }
    }

    static func journey(_ browser: WebDriverSession, fixture: PurchaseFixture, purchase id: String, token: String,
                        shots: TemporaryDirectory) async throws {
        func text(_ selector: String) async throws -> String {
            _ = try await browser.element(selector)
            return try await browser.run("return document.querySelector(arguments[0]).textContent", [selector]) as? String ?? ""
        }
        func cleanLog(_ step: String) async throws {
            let problems = try await browser.log().filter { $0.level == "SEVERE" || $0.level == "WARNING" }
            #expect(problems.isEmpty, "browser log after \(step): \(problems)")
        }
        let card = "[data-purchase='\(id)']"

        try await browser.open("http://127.0.0.1:\(fixture.depot.port)/admin/#purchases")
        try await browser.type("#sign-in-token", Self.adminToken + "\u{E007}")
        try await browser.wait(until: "return document.body.dataset.signedIn === 'true'", "signed in")
        _ = try await browser.element("#purchase-search")

        // By transaction.
        try await browser.type("#purchase-query", id + "\u{E007}")
        _ = try await browser.element(card)
        let shown = try await text(card)
        #expect(shown.contains("com.example.depot.level2") && shown.contains("pack level2") && shown.contains("player-7")
                && shown.contains("Production") && shown.contains("Never revoked") && shown.contains("Nothing delivered yet"), "\(shown)")
        #expect(try await text("\(card) [data-field='state']") == "granted")
        try await browser.screenshot(to: shots.path + "/1-found.png")

        // Revoke: the confirmation says what changes; its token is then refused as revoked.
        try await browser.click("\(card) button[data-action='revoke']")
        try await browser.wait(until: "return document.getElementById('confirm').open", "the confirmation")
        let confirmation = try await text("#confirm-text")
        #expect(confirmation.contains("every download token issued for it is refused as revoked") && confirmation.contains("pack level2")
                && confirmation.contains("support decision"), "\(confirmation)")
        try await browser.click("#confirm-ok")
        try await browser.wait(until: "return document.querySelector(\"\(card)\")?.dataset.state === 'revoked'", "revoked")
        #expect(try await text("\(card) .revocations").contains("admin"))
        let refused = try await fixture.packStatus("level2", token: token)
        #expect(refused.status == 403 && refused.errorCode == "revoked", "\(refused.summary)")
        try await browser.screenshot(to: shots.path + "/2-revoked.png")

        // By account, then restore.
        try await browser.run("document.getElementById('purchase-kind').value = 'account'; document.getElementById('purchase-query').value = ''")
        try await browser.type("#purchase-query", "player-7\u{E007}")
        try await browser.wait(until: "return document.getElementById('status').textContent.includes('1 purchase found')", "the account's purchases")
        #expect(try await browser.run("return document.querySelectorAll('[data-purchase]').length") as? Int == 1)
        try await browser.click("\(card) button[data-action='restore']")
        try await browser.wait(until: "return document.getElementById('confirm').open", "the confirmation")
        #expect(try await text("#confirm-text").contains("honoured again"))
        try await browser.click("#confirm-ok")
        try await browser.wait(until: "return document.querySelector(\"\(card)\")?.dataset.state === 'granted'", "restored")
        #expect(try await fixture.packStatus("level2", token: token).status == 307)
        #expect(try await text("\(card) .revocations").contains("restored"))
        try await browser.screenshot(to: shots.path + "/3-restored.png")

        // Nothing found says so.
        try await browser.run("document.getElementById('purchase-kind').value = 'transaction'; document.getElementById('purchase-query').value = ''")
        try await browser.type("#purchase-query", "no-such-transaction\u{E007}")
        _ = try await browser.element("#purchase-none")

        try await browser.resize(width: 390, height: 844)
        try await browser.run("document.getElementById('purchase-kind').value = 'account'; document.getElementById('purchase-query').value = ''")
        try await browser.type("#purchase-query", "player-7\u{E007}")
        _ = try await browser.element(card)
        try await Task.sleep(for: .milliseconds(300))
        let overflow = try await browser.run("return document.documentElement.scrollWidth - document.documentElement.clientWidth") as? Int ?? 99
        #expect(overflow <= 1, "the purchases page is wider than a phone's screen by \(overflow) px")
        try await browser.screenshot(to: shots.path + "/4-phone.png")
        try await cleanLog("the purchases page")
    }
}
