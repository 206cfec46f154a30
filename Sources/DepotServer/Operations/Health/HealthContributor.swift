package import DepotWire

/// One part of the instance's health (operations.md §3): it fills in its figures and, when its part is not
/// well, lowers the status with a reason — ``HealthReport/degrade(because:)`` while the instance still serves,
/// ``HealthReport/fail(because:)`` when it cannot. A new part (a shared ledger, say) is one more contributor in
/// the list ``DepotApp`` gives the ``HealthCheck``.
package protocol HealthContributor: Sendable {
    func contribute(to report: inout HealthReport) async
}
