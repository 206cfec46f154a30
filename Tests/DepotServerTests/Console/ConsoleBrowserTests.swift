import DepotServer
import DepotTestSupport
import Foundation
import Testing

/// Issue 16: the console in a real headless Chromium (WebDriver through Debian's `chromedriver`): sign-in (a wrong
/// token refused), a 20 MB three-file upload with progress, cut by the network and resumed, staged, promoted,
/// rolled back, the product retired, the charts' figures against `/metrics`; a screenshot of every page, and no
/// JavaScript error or failed request in the browser's log but the ones the test provokes. One browser for all.
@Suite("Console: in a real browser", .serialized)
struct ConsoleBrowserTests {
    static let adminToken = ConsoleSignInTests.adminToken

    /// The journey through the console, step by step, in one browser.
    @Test(.timeLimit(.minutes(5))) func aPublisherUploadsStagesPromotesRollsBackAndRetires() async throws {
        let depot = try await TestDepot.start { $0.adminToken = Self.adminToken }
        let proxy = try CuttingProxy(upstreamPort: depot.port)
        let chromium = try await Chromium.start()
        let browser = try await WebDriverSession.start(chromium)
        let shots = TemporaryDirectory("console-screenshots")
        let journey = BrowserJourney(browser: browser, depot: depot, proxy: proxy, shots: shots)
        do {
            try await journey.run()
        } catch {
            try? await browser.screenshot(to: shots.path + "/failure.png")
            let said = try? await browser.run("return document.getElementById('status').textContent + ' | ' + JSON.stringify((window.uploadEvents ?? []).filter((e) => e.type !== 'progress'))")
            Issue.record("the page said: \(String(describing: said)); browser log: \(String(describing: try? await browser.log()))")
            journey.keepScreenshots()
            await browser.close()
            await chromium.stop()
            proxy.stop()
            await depot.stop()
            throw error
        }
        journey.keepScreenshots()
        await browser.close()
        await chromium.stop()
        proxy.stop()
        await depot.stop()
    }
}
