import DepotWire
import Platform

/// Free space of the content and data volumes (figures only; publishing and uploads refuse what does not fit).
struct DiskHealth: HealthContributor {
    let paths: DepotPaths
    let space: any VolumeSpace

    func contribute(to report: inout HealthReport) async {
        report.disk = HealthReport.DiskState(contentFreeBytes: max(0, space.freeBytes(at: paths.contentDirectory)),
                                             dataFreeBytes: max(0, space.freeBytes(at: paths.dataDirectory)))
    }
}
