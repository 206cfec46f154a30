import HTTP
import Server
import Synchronization

/// `GET /products_v1.json` and `/products_v2.json` (spec §4.1): the current snapshot's lists, kept per event
/// loop so that loops never share the reference counts of the hot path.
final class ProductListRoutes: Sendable {
    enum Version: Sendable { case v1, v2 }

    let store: CatalogStore
    private let slots: [LoopSlot]

    /// Touched only by the event loop whose index it has.
    final class LoopSlot: @unchecked Sendable {
        var generation = -1
        var lists: DepotSnapshot.Lists?
    }

    init(store: CatalogStore) {
        self.store = store
        slots = (0..<max(1, store.replicaCount)).map { _ in LoopSlot() }
    }

    /// The answer to a GET or HEAD of list `version` on loop `loop`.
    func answer(_ head: RequestHead, _ version: Version, loop: Int) -> Response {
        guard let lists = lists(loop: loop) else { return CatalogFailure.notLoaded.answer.response(.products) }
        return (version == .v1 ? lists.v1 : lists.v2).respond(to: head)
    }

    /// Loop `loop`'s copy of the current snapshot's lists (nil before a catalog has loaded).
    func lists(loop: Int) -> DepotSnapshot.Lists? {
        let slot = slots[loop % slots.count]
        let generation = store.generation.load(ordering: .acquiring)
        if slot.generation != generation {
            let snapshot = store.current
            slot.lists = snapshot.map { $0.replicas[loop % $0.replicas.count] }
            slot.generation = generation
        }
        return slot.lists
    }
}
