/// The App Store environment a purchase or notification comes from (`environment`).
public struct AppStoreEnvironment: AppStoreWireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Real purchases.
    public static let production = AppStoreEnvironment(rawValue: "Production")
    /// Sandbox testers and App Review.
    public static let sandbox = AppStoreEnvironment(rawValue: "Sandbox")
    /// StoreKit Testing in Xcode: signed by a local key, never trusted by a server.
    public static let xcode = AppStoreEnvironment(rawValue: "Xcode")
    /// Apple's local testing environment: never trusted by a server.
    public static let localTesting = AppStoreEnvironment(rawValue: "LocalTesting")
}
