public import Dispatch
import Synchronization

/// Holds the next call of a seam until the test lets it go: a test arms the gate, the seam calls ``pass()``, the
/// test waits until the call is held, checks what must go on meanwhile, then releases it. Used to show that work
/// left the event loop (or a shared pool): while it is held, another request is still answered.
public final class HoldGate: Sendable {
    private let armed = Atomic<Bool>(false)
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    public init() {}

    /// The next ``pass()`` blocks (once).
    public func arm() { armed.store(true, ordering: .sequentiallyConsistent) }

    /// Called by the seam: returns at once unless armed; an armed call disarms the gate and waits for ``release()``.
    public func pass() {
        if armed.exchange(false, ordering: .sequentiallyConsistent) {
            entered.signal()
            released.wait()
        }
    }

    /// Whether the armed call began within `seconds`.
    public func waitUntilEntered(seconds: Double) -> Bool { entered.wait(timeout: .now() + seconds) == .success }

    /// Lets the held call return.
    public func release() { released.signal() }
}
