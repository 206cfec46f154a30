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

    init(configuration: ServerConfiguration, responder: any Responder, observer: (any ServerObserver)?) {
        self.configuration = configuration
        self.responder = responder
        self.observer = observer
    }
}

/// An HTTP/1.1 server on epoll event loops, one thread per loop.
public final class HTTPServer: Sendable {
    /// The address the server accepts connections on (with the real port when 0 was asked for).
    public let address: SocketAddress
    private let core: ServerCore
    private let loops: [EventLoop]
    private let finished: DispatchGroup
    private let stopped = Atomic<Bool>(false)

    /// Binds the listening sockets and starts the loops. Throws when the address cannot be bound.
    public init(configuration: ServerConfiguration, responder: any Responder, observer: (any ServerObserver)? = nil) throws {
        guard let requested = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw ServerStartError.badAddress("\(configuration.host):\(configuration.port)")
        }
        core = ServerCore(configuration: configuration, responder: responder, observer: observer)
        // SO_REUSEPORT would let this server quietly share a port another server of the same user listens on:
        // a probe bind without it refuses a port in use first.
        if requested.port != 0 { try Listener.probe(requested) }
        // The first socket picks the port (port 0), the others join it with SO_REUSEPORT.
        let first = try Listener.open(requested)
        guard let bound = Listener.boundAddress(first) else {
            close(first)
            throw SystemError("getsockname")
        }
        address = bound
        var fds = [first]
        do {
            for _ in 1..<configuration.loopCount {
                fds.append(try Listener.open(bound))
            }
            var made: [EventLoop] = []
            for (i, fd) in fds.enumerated() {
                made.append(try EventLoop(index: i, core: core, listenFD: fd))
            }
            loops = made
        } catch {
            for fd in fds { close(fd) }
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
    }

    /// Open client connections.
    public var openConnections: Int { core.openConnections.load(ordering: .relaxed) }

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
