/// A publish lock held in the database (PostgreSQL: a session advisory lock on a dedicated connection), so
/// publishes of one pack are serialized across hosts whatever the shared file system does with `flock`.
///
/// Release it when the publish ends; if the process dies, the server releases it with the session. If the
/// session is lost while held (the database restarted), the lock is gone: `isHeld` turns `false`.
public final class LedgerPublishLock: Sendable {
    private let releaser: @Sendable () async -> Void
    private let holding: @Sendable () async -> Bool

    init(release: @escaping @Sendable () async -> Void, isHeld: @escaping @Sendable () async -> Bool) {
        self.releaser = release
        self.holding = isHeld
    }

    /// Whether the session that holds the lock is still connected (the lock is then still held).
    public var isHeld: Bool {
        get async { await holding() }
    }

    /// Releases the lock and closes its session. Releasing twice is harmless.
    public func release() async {
        await releaser()
    }
}
