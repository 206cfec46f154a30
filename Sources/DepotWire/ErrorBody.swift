/// Every error answer's body (spec §4): `{"error": {"code": "snake_case", "message": "sentence"}}` plus the
/// extra fields some errors carry beside `error`.
public struct ErrorBody: Sendable, Hashable, Codable {
    /// The code and the human sentence.
    public struct Detail: Sendable, Hashable, Codable {
        public var code: String
        public var message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    public var error: Detail
    /// The status `verifyReceipt` answered (422, 502, 503 of `/v1/receipts`).
    public var appleStatus: Int?
    /// The App Store Server API's `errorCode` behind a `422`, `502` or `503` of `/v1/receipts` (e.g. `4040010`).
    public var appleErrorCode: Int?
    /// The JWS check that failed (`format`, `chain`, `signature`, ...).
    public var check: String?
    /// `507 insufficient_storage`: the bytes that must be free.
    public var requiredBytes: Int64?
    /// `507 insufficient_storage`: the bytes that are free.
    public var freeBytes: Int64?

    public init(code: String, message: String, appleStatus: Int? = nil, appleErrorCode: Int? = nil, check: String? = nil,
                requiredBytes: Int64? = nil, freeBytes: Int64? = nil) {
        error = Detail(code: code, message: message)
        self.appleStatus = appleStatus
        self.appleErrorCode = appleErrorCode
        self.check = check
        self.requiredBytes = requiredBytes
        self.freeBytes = freeBytes
    }

    private enum CodingKeys: String, CodingKey { case error, appleStatus, appleErrorCode, check, requiredBytes, freeBytes }

    /// Lenient about where and how the extra fields come: beside `error` (where Depot puts them) or inside it,
    /// and `appleStatus` as a number or as decimal text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        error = try container.decode(Detail.self, forKey: .error)
        let inner = try? container.nestedContainer(keyedBy: CodingKeys.self, forKey: .error)
        appleStatus = Self.integer(container, .appleStatus) ?? inner.flatMap { Self.integer($0, .appleStatus) }
        appleErrorCode = Self.integer(container, .appleErrorCode) ?? inner.flatMap { Self.integer($0, .appleErrorCode) }
        check = (try? container.decodeIfPresent(String.self, forKey: .check)) ?? (try? inner?.decodeIfPresent(String.self, forKey: .check))
        requiredBytes = try container.decodeIfPresent(Int64.self, forKey: .requiredBytes)
        freeBytes = try container.decodeIfPresent(Int64.self, forKey: .freeBytes)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(error, forKey: .error)
        try container.encodeIfPresent(appleStatus, forKey: .appleStatus)
        try container.encodeIfPresent(appleErrorCode, forKey: .appleErrorCode)
        try container.encodeIfPresent(check, forKey: .check)
        try container.encodeIfPresent(requiredBytes, forKey: .requiredBytes)
        try container.encodeIfPresent(freeBytes, forKey: .freeBytes)
    }

    private static func integer(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) -> Int? {
        if let number = try? container.decodeIfPresent(Int.self, forKey: key) { return number }
        if let text = try? container.decodeIfPresent(String.self, forKey: key) { return Int(text) }
        return nil
    }
}
