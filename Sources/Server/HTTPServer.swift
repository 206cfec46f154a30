import CLinux
import Foundation
import Glibc
import HTTP
import Synchronization

/// What every loop shares.
final class ServerCore: Sendable {
    let configuration: ServerConfiguration
    let responder: any Responder
    let observer: (any ServerObserver)?
    let openConnections = Atomic<Int>(0)
    /// Connections still open when the stop's grace period ended (closed then, whatever they were sending).
    let cutOffAtStop = Atomic<Int>(0)
    /// Collected request bodies held, over every loop.
    let budget: BodyBudget
    /// Every loop, for the accepting loop to hand connections out.
    let loops = LoopList()

    init(configuration: ServerConfiguration, responder: any Responder, observer: (any ServerObserver)?) {
        self.configuration = configuration
        self.responder = responder
        self.observer = observer
        budget = BodyBudget(capacity: configuration.bodyBudgetBytes)
    }
}

/// The loops of a server, set once before any thread starts.
///
/// `@unchecked Sendable`: written during `HTTPServer.init` before the loop threads start, and emptied after
/// every loop thread has exited; read only by the loops in between.
final class LoopList: @unchecked Sendable {
    private(set) var loops: [EventLoop] = []

    func set(_ loops: [EventLoop]) { self.loops = loops }
}

/// An HTTP/1.1 server on epoll event loops, one thread per loop.
public final class HTTPServer: Sendable {
    /// The address the server accepts connections on (with the real port when 0 was asked for).
    public let address: SocketAddress
    private let core: ServerCore
    package let loops: [EventLoop]
    private let finished: DispatchGroup
    private let stopped = Atomic<Bool>(false)

    /// Binds the listening sockets and starts the loops. Throws when the address cannot be bound.
    public init(configuration: ServerConfiguration, responder: any Responder, observer: (any ServerObserver)? = nil) throws {
        guard let requested = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw ServerStartError.badAddress("\(configuration.host):\(configuration.port)")
        }
        core = ServerCore(configuration: configuration, responder: responder, observer: observer)
        // A peer that resets a connection mid-sendfile must not kill the process (sendfile has no MSG_NOSIGNAL).
        signal(SIGPIPE, SIG_IGN)
        // Connections and cached files are descriptors: use all the process may have.
        HTTPServer.raiseDescriptorLimit()
        MemoryRelease.largeBuffersMapped
        // One listening socket, accepted on loop 0, which hands the connections out round-robin: every loop
        // gets its share whatever the client's ports hash to (SO_REUSEPORT's hashing can put 6 of 8
        // connections on one loop), and a port another server listens on is refused.
        let listener = try Listener.open(requested)
        guard let bound = Listener.boundAddress(listener) else {
            close(listener)
            throw SystemError("getsockname")
        }
        address = bound
        do {
            var made: [EventLoop] = []
            for i in 0..<configuration.loopCount {
                made.append(try EventLoop(index: i, core: core, listenFD: i == 0 ? listener : -1))
            }
            loops = made
            core.loops.set(made)
        } catch {
            close(listener)
            throw error
        }
        finished = DispatchGroup()
        for loop in loops {
            finished.enter()
            let group = finished
            let thread = Thread {
                loop.run()
                group.leave()
            }
            thread.name = "depot-loop-\(loop.index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
        // The loops hold the core and the core lists the loops: once every loop has exited, break that cycle
        // so a stopped server's loops (epoll set, eventfd, buffers) are freed.
        finished.notify(queue: .global()) { [core] in core.loops.set([]) }
    }

    /// Raises the soft limit on open descriptors to the hard limit.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Runs `job` on every loop's own thread, with the loop's index (per-loop state kept by the responder).
    public func onEachLoop(_ job: @escaping @Sendable (Int) -> Void) {
        for loop in loops {
            let index = loop.index
            loop.execute { job(index) }
        }
    }

    /// Runs `job` on the own thread of the loop whose index is `index` (a ``RequestContext/loopIndex``), soon;
    /// dropped when that loop has already exited.
    public func onLoop(_ index: Int, _ job: @escaping @Sendable () -> Void) {
        loops[index % loops.count].execute(job)
    }

    /// Open client connections.
    public var openConnections: Int { core.openConnections.load(ordering: .relaxed) }

    /// Connections the stop's grace period cut off (closed while still busy); read after ``stopped()``.
    public var connectionsCutOffAtStop: Int { core.cutOffAtStop.load(ordering: .relaxed) }

    /// Bytes of collected request bodies held now (at most `bodyBudgetBytes`).
    public var bufferedBodyBytes: Int { core.budget.inUse }

    /// Stops accepting; in-flight requests get up to the configured grace period to finish.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let grace = core.configuration.shutdownGraceMilliseconds
        for loop in loops {
            loop.execute { loop.beginStop(graceMilliseconds: grace) }
        }
    }

    /// Blocks the calling thread until every loop has finished (after `stop`).
    public func waitUntilStopped() {
        finished.wait()
    }

    /// Waits for the loops to finish without blocking a thread of the cooperative pool.
    public func stopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finished.notify(queue: .global()) { continuation.resume() }
        }
    }
}

public enum ServerStartError: Error, CustomStringConvertible {
    case badAddress(String)

    public var description: String {
        switch self {
        case .badAddress(let a): "not a valid listen address: \(a)"
        }
    }
}
