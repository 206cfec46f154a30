package import Foundation

/// A smoothed transfer rate: an exponential moving average whose weight follows the elapsed time
/// (`1 - e^(-Δt/τ)`), so a burst of small samples and one long sample count alike. Until τ seconds have
/// been observed it is the plain average so far, so a tiny first sample (a 15-byte file) does not hold the
/// estimate down for the next τ seconds.
package struct TransferRate: Sendable {
    /// τ, seconds: how quickly older samples fade.
    let timeConstant: TimeInterval
    /// The smoothed rate; nil until a sample took measurable time.
    package private(set) var bytesPerSecond: Double?
    private var pendingBytes: Int64 = 0
    private var totalBytes: Double = 0
    private var totalSeconds: TimeInterval = 0

    /// A rate whose older samples fade with time constant τ.
    package init(timeConstant: TimeInterval) { self.timeConstant = timeConstant }

    /// `bytes` arrived over `seconds`. Samples over no measurable time are carried into the next one.
    package mutating func record(bytes: Int64, seconds: TimeInterval) {
        pendingBytes += bytes
        guard seconds > 0 else { return }
        let sample = Double(pendingBytes) / seconds
        totalBytes += Double(pendingBytes)
        totalSeconds += seconds
        pendingBytes = 0
        if totalSeconds < timeConstant {
            bytesPerSecond = totalBytes / totalSeconds
            return
        }
        guard let current = bytesPerSecond else { bytesPerSecond = sample; return }
        let weight = timeConstant > 0 ? 1 - exp(-seconds / timeConstant) : 1
        bytesPerSecond = current + weight * (sample - current)
    }
}
