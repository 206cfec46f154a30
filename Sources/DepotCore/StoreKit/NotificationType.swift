/// App Store Server Notification V2 `notificationType`.
public struct NotificationType: AppStoreWireValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Apple refunded the transaction: revoke what it granted.
    public static let refund = NotificationType(rawValue: "REFUND")
    /// Family Sharing access ended: revoke what the transaction granted.
    public static let revoke = NotificationType(rawValue: "REVOKE")
    /// Apple reversed an earlier refund: restore the transaction.
    public static let refundReversed = NotificationType(rawValue: "REFUND_REVERSED")
    /// Apple declined a refund request.
    public static let refundDeclined = NotificationType(rawValue: "REFUND_DECLINED")
    /// A customer asked for a refund of a consumable.
    public static let consumptionRequest = NotificationType(rawValue: "CONSUMPTION_REQUEST")
    /// Sent on request from App Store Connect or the API to test the endpoint.
    public static let test = NotificationType(rawValue: "TEST")
    /// A customer subscribed (or resubscribed).
    public static let subscribed = NotificationType(rawValue: "SUBSCRIBED")
    /// A subscription renewed.
    public static let didRenew = NotificationType(rawValue: "DID_RENEW")
    /// A subscription failed to renew.
    public static let didFailToRenew = NotificationType(rawValue: "DID_FAIL_TO_RENEW")
    /// A subscription expired.
    public static let expired = NotificationType(rawValue: "EXPIRED")
    /// A one-time purchase was made.
    public static let oneTimeCharge = NotificationType(rawValue: "ONE_TIME_CHARGE")
}
