import DepotWire
import Platform
import Server

/// `GET /admin/v1/traffic`: the ``TrafficHistory`` with the disk figures, for the console's charts.
struct TrafficRoutes: Sendable {
    let history: TrafficHistory
    let paths: DepotPaths
    let space: any VolumeSpace
    /// What publishing keeps free on the content volume.
    let reserve: @Sendable () -> Int64

    func report() -> Handling {
        .reply(.later { [self] in
            // statvfs off the loops.
            let disk = await Self.queue.run { [self] in
                TrafficReport.Disk(contentFreeBytes: max(0, space.freeBytes(at: paths.contentDirectory)),
                                   contentTotalBytes: max(0, space.totalBytes(at: paths.contentDirectory)),
                                   contentReserveBytes: reserve(),
                                   dataFreeBytes: max(0, space.freeBytes(at: paths.dataDirectory)))
            }
            return JSONAnswer.response(status: 200, history.report(disk: disk), .adminTraffic)
        })
    }

    private static let queue = BlockingQueue(label: "depot.traffic.disk")
}
