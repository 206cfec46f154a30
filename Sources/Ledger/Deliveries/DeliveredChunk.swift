public import Foundation

/// One chunk of a pack file that was sent whole to a purchase, and when that first completed.
public struct DeliveredChunk: Sendable, Equatable {
    /// The chunk's offset in its file.
    public var offset: Int64
    /// The chunk's length in bytes.
    public var length: Int64
    /// When its last missing byte was recorded (to the millisecond).
    public var deliveredAt: Date

    /// A delivered chunk; see the properties.
    public init(offset: Int64, length: Int64, deliveredAt: Date) {
        self.offset = offset
        self.length = length
        self.deliveredAt = deliveredAt
    }
}
