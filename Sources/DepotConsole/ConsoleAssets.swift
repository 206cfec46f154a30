import DepotCrypto

/// One file of the publisher console, embedded in the binary at build time from `Console/` (SwiftPM's
/// `embedInCode` resources): nothing is installed next to `depot`.
package struct ConsoleAsset: Sendable {
    /// The file name (`app.js`), as the page refers to it.
    package let name: String
    package let contentType: String
    package let bytes: [UInt8]
    /// A strong validator: the first 128 bits of the SHA-256 of the bytes, quoted.
    package let etag: String

    init(name: String, contentType: String, bytes: [UInt8]) {
        self.name = name
        self.contentType = contentType
        self.bytes = bytes
        etag = "\"" + Hex.encode(Array(SHA256.hash(bytes).prefix(16))) + "\""
    }
}

/// The console's page and modules.
package enum ConsoleAssets {
    /// `index.html`, served at `/admin/`.
    package static let page = ConsoleAsset(name: "index.html", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html)

    /// The modules and the style sheet, served at `/admin/console/<name>`.
    package static let modules: [ConsoleAsset] = [
        script("app.js", PackageResources.app_js),
        script("api.js", PackageResources.api_js),
        script("dom.js", PackageResources.dom_js),
        script("format.js", PackageResources.format_js),
        script("products.js", PackageResources.products_js),
        script("packs.js", PackageResources.packs_js),
        script("upload.js", PackageResources.upload_js),
        script("purchases.js", PackageResources.purchases_js),
        script("traffic.js", PackageResources.traffic_js),
        script("charts.js", PackageResources.charts_js),
        ConsoleAsset(name: "console.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.console_css),
        ConsoleAsset(name: "icon.svg", contentType: "image/svg+xml", bytes: PackageResources.icon_svg),
    ]

    private static let byName = Dictionary(uniqueKeysWithValues: modules.map { ($0.name, $0) })

    /// The module or style sheet called `name`, or nil.
    package static func asset(named name: String) -> ConsoleAsset? { byName[name] }

    private static func script(_ name: String, _ bytes: [UInt8]) -> ConsoleAsset {
        ConsoleAsset(name: name, contentType: "text/javascript; charset=utf-8", bytes: bytes)
    }
}
