/// Why a request of the support view (`/admin/v1/purchases`) was refused.
enum SupportFailure: Error, Sendable, Equatable {
    /// The query does not name exactly one of `transaction` and `account`, or names it empty or too long.
    case badQuery(String)
    /// `after` is not a cursor a page of this server handed out.
    case badCursor
    /// `after` with a `transaction` look-up (a single purchase has no next page).
    case cursorWithoutAccount
    /// No purchase with that original transaction ID.
    case unknownPurchase(String)
    /// The ledger could not be read or written.
    case ledgerUnavailable
}
