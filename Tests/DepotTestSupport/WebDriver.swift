import Foundation

/// A WebDriver (W3C) session with a headless Chromium, through `chromedriver`: just what the console's tests use.
public final class WebDriverSession: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// One line of the browser's console log.
    public struct LogEntry: Sendable, CustomStringConvertible {
        public let level: String
        public let message: String
        public var description: String { "\(level): \(message)" }
    }

    private let base: String
    private let client: LoopbackJSONClient

    /// A new headless browser (its own profile directory, no sandbox when running as root) logging everything
    /// its pages write to the console.
    public static func start(_ chromium: Chromium, width: Int = 1280, height: Int = 900) async throws -> WebDriverSession {
        let (browser, _) = try Chromium.binaries()
        let profile = TemporaryDirectory("chromium-profile")
        var arguments = ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
                         "--window-size=\(width),\(height)", "--user-data-dir=\(profile.path)"]
        if getuid() == 0 { arguments.append("--no-sandbox") }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": ["binary": browser, "args": arguments],
            "goog:loggingPrefs": ["browser": "ALL"],
        ]]]
        let client = chromium.client
        let value = try await send(client, "POST", "/session", capabilities)
        guard let object = value as? [String: Any], let id = object["sessionId"] as? String else {
            throw Failure(description: "no session: \(String(describing: value))")
        }
        return WebDriverSession(base: "/session/" + id, client: client, profile: profile)
    }

    /// The browser's profile directory, removed with the session.
    private let profile: TemporaryDirectory

    private init(base: String, client: LoopbackJSONClient, profile: TemporaryDirectory) {
        self.base = base
        self.client = client
        self.profile = profile
    }

    private static func send(_ client: LoopbackJSONClient, _ method: String, _ path: String, _ body: [String: Any]?) async throws -> Any? {
        let object = try await client.send(method, path, body) as? [String: Any]
        let value = object?["value"]
        if let failure = value as? [String: Any], let error = failure["error"] as? String {
            throw Failure(description: "\(method) \(path): \(error): \(failure["message"] as? String ?? "")")
        }
        return value
    }

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        try await Self.send(client, method, path.isEmpty ? base : base + "/" + path, body ?? (method == "POST" ? [:] : nil))
    }

    /// Opens `url` and waits for its load.
    public func open(_ url: String) async throws { try await command("POST", "url", ["url": url]) }

    /// Runs `script` (a function body; `arguments[i]` are the arguments) and returns its JSON result. A returned
    /// promise is awaited.
    @discardableResult
    public func run(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await command("POST", "execute/sync", ["script": script, "args": arguments])
    }

    /// The element matching a CSS selector, waiting up to `timeout` seconds for it to exist.
    public func element(_ selector: String, timeout: Double = 15) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                let value = try await command("POST", "element", ["using": "css selector", "value": selector])
                if let object = value as? [String: Any], let reference = object.values.first as? String { return reference }
            } catch {
                if Date() > deadline { throw Failure(description: "no element \(selector) within \(timeout) s: \(error)") }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Clicks the element matching `selector`.
    public func click(_ selector: String) async throws {
        let element = try await element(selector)
        try await command("POST", "element/\(element)/click")
    }

    /// Types `text` into the element matching `selector` (for a file input: newline-separated paths).
    public func type(_ selector: String, _ text: String) async throws {
        let element = try await element(selector)
        try await command("POST", "element/\(element)/value", ["text": text])
    }

    /// Presses keys (WebDriver key codes such as `"\u{E004}"` for Tab) in whatever element has the focus.
    public func press(_ keys: String) async throws {
        let actions: [[String: Any]] = keys.unicodeScalars.flatMap { key -> [[String: Any]] in
            [["type": "keyDown", "value": String(key)], ["type": "keyUp", "value": String(key)]]
        }
        try await command("POST", "actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
        try await command("DELETE", "actions")
    }

    /// Waits until `condition` (a script returning a boolean) is true, up to `timeout` seconds.
    public func wait(until condition: String, timeout: Double = 30, _ describe: String) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try await run(condition) as? Bool == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "timed out after \(timeout) s waiting for \(describe)")
    }

    /// Resizes the browser window.
    public func resize(width: Int, height: Int) async throws {
        try await command("POST", "window/rect", ["width": width, "height": height])
    }

    /// A PNG of the viewport, written to `path`.
    public func screenshot(to path: String) async throws {
        guard let text = try await command("GET", "screenshot") as? String, let data = Data(base64Encoded: text) else {
            throw Failure(description: "no screenshot")
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The browser console's lines since the last call (JavaScript errors, failed requests, messages).
    public func log() async throws -> [LogEntry] {
        let value = try await command("POST", "se/log", ["type": "browser"])
        return ((value as? [[String: Any]]) ?? []).map {
            LogEntry(level: $0["level"] as? String ?? "", message: $0["message"] as? String ?? "")
        }
    }

    /// Ends the session and its browser.
    public func close() async {
        _ = try? await command("DELETE", "")
    }
}
