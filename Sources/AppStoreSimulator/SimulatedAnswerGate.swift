import Synchronization

/// Holds the simulated store's answers for the receipts issued with it (`Behaviour.gate`) until a test opens it,
/// or the store stops: the test decides when Apple answers, instead of racing a delay against a loaded machine.
public final class SimulatedAnswerGate: Sendable {
    private let state = Atomic<Bool>(false)

    /// A closed gate.
    public init() {}

    /// Lets the held answers go, and every later one straight through.
    public func open() { state.store(true, ordering: .releasing) }

    /// Whether `open()` was called.
    public var isOpen: Bool { state.load(ordering: .acquiring) }
}
