import HTTP
import Server

/// Feeds every finished exchange to the metrics and, when on, the access log (one line per request, with its
/// request ID and the client's address; the path without its query, which may carry a token).
struct ExchangeRecorder: ServerObserver {
    let metrics: Metrics
    let accessLog: Logger?

    func exchangeCompleted(_ record: ExchangeRecord) {
        let seconds = Double(record.durationNanoseconds) / 1e9
        metrics.recordRequest(route: record.route, status: record.status, bytes: record.bytesSent, seconds: seconds,
                              shard: record.loopIndex)
        guard let accessLog else { return }
        let path = record.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        accessLog.with(requestID: record.requestID).request(remote: record.clientAddress, method: record.method.description,
                                                            path: path, status: record.status, bytes: record.bytesSent,
                                                            durationMilliseconds: seconds * 1000)
    }
}
