import HTTP
import Server

/// Feeds every finished exchange to the metrics and, when on, the access log (one line per request, with its
/// request ID and the client's address; the path without its query, which may carry a token).
struct ExchangeRecorder: ServerObserver {
    let metrics: Metrics
    let accessLog: Logger?
    /// The delivery record's gatherer (nil when `--delivery-record off`).
    var deliveries: DeliveryRecorder? = nil

    func exchangeCompleted(_ record: ExchangeRecord) {
        recordDelivery(record)
        recordMetrics(record)
        logAccess(record)
    }

    /// A pack file answer cut short still delivered the bytes it wrote (spec app-store-server-api §7), and the
    /// request still gets its access line and its metrics (the status sent, the body bytes written before the
    /// connection ended: the client left, the write stalled, the stop's 10 s ran out), so the bytes sent by route
    /// add up to what left the server, and the access log and the request counters agree.
    func exchangeInterrupted(_ record: ExchangeRecord) {
        recordDelivery(record)
        recordMetrics(record)
        logAccess(record)
    }

    private func recordMetrics(_ record: ExchangeRecord) {
        metrics.recordRequest(route: record.route, status: record.status, bytes: record.bytesSent,
                              seconds: Double(record.durationNanoseconds) / 1e9, shard: record.loopIndex)
    }

    private func logAccess(_ record: ExchangeRecord) {
        guard let accessLog else { return }
        let path = record.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        accessLog.with(requestID: record.requestID).request(remote: record.clientAddress, method: record.method.description,
                                                            path: path, status: record.status, bytes: record.bytesSent,
                                                            durationMilliseconds: Double(record.durationNanoseconds) / 1e6)
    }

    /// Notes the file bytes a tagged answer wrote, on this loop's own buffer.
    private func recordDelivery(_ record: ExchangeRecord) {
        guard let deliveries, record.bytesSent > 0, let tag = record.tag as? DeliveryTag else { return }
        for range in tag.ranges(written: record.bytesSent) {
            deliveries.record(loop: record.loopIndex, DeliveryRecorder.Piece(
                originalTransactionID: tag.purchase, pack: tag.pack, version: tag.version, path: tag.path, range: range))
        }
    }
}
