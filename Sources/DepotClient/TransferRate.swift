import Foundation

/// A smoothed transfer rate: an exponential moving average whose weight follows the elapsed time
/// (`1 - e^(-Δt/τ)`), so a burst of small samples and one long sample count alike.
struct TransferRate: Sendable {
    /// τ, seconds: how quickly older samples fade.
    let timeConstant: TimeInterval
    private(set) var bytesPerSecond: Double?
    private var pendingBytes: Int64 = 0

    init(timeConstant: TimeInterval) { self.timeConstant = timeConstant }

    /// `bytes` arrived over `seconds`. Samples over no measurable time are carried into the next one.
    mutating func record(bytes: Int64, seconds: TimeInterval) {
        pendingBytes += bytes
        guard seconds > 0 else { return }
        let sample = Double(pendingBytes) / seconds
        pendingBytes = 0
        guard let current = bytesPerSecond else { bytesPerSecond = sample; return }
        let weight = timeConstant > 0 ? 1 - exp(-seconds / timeConstant) : 1
        bytesPerSecond = current + weight * (sample - current)
    }
}
