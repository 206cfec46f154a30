public import Foundation

extension Date {
    /// A date from App Store milliseconds since 1970 (whole or fractional, e.g. Xcode's
    /// `1697679936056.485`).
    public init(appStoreMilliseconds milliseconds: Double) {
        self.init(timeIntervalSince1970: milliseconds / 1000)
    }

    /// Milliseconds since 1970, as App Store payloads count time.
    public var appStoreMilliseconds: Double { timeIntervalSince1970 * 1000 }
}

extension KeyedDecodingContainer {
    /// Decodes a required App Store timestamp (milliseconds since 1970, possibly fractional).
    func decodeAppStoreDate(forKey key: Key) throws -> Date {
        Date(appStoreMilliseconds: try decode(Double.self, forKey: key))
    }

    /// Decodes an optional App Store timestamp; JSON `null` counts as absent.
    func decodeAppStoreDateIfPresent(forKey key: Key) throws -> Date? {
        try decodeIfPresent(Double.self, forKey: key).map { Date(appStoreMilliseconds: $0) }
    }

    /// Decodes an identifier Apple sends as a string (StoreKit 2) or a number (some older payloads).
    func decodeIdentifier(forKey key: Key) throws -> String {
        if let text = try? decode(String.self, forKey: key) { return text }
        if let number = try? decode(Int64.self, forKey: key) { return String(number) }
        throw DecodingError.typeMismatch(String.self, DecodingError.Context(
            codingPath: codingPath + [key], debugDescription: "expected an identifier string or integer"))
    }

    /// Decodes an optional identifier (string or number); JSON `null` counts as absent.
    func decodeIdentifierIfPresent(forKey key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeIdentifier(forKey: key)
    }
}
