import ArgumentParsing
import DepotServer
import Foundation

/// `depot serve`: runs the server until SIGTERM or SIGINT. Once the server runs, everything on stderr is a log line.
struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "Serve the product lists, purchases and packs over HTTP."
    static let synopsis: String? = "[options]"

    @OptionGroup var configuration: DepotConfiguration

    func run() async throws -> Int32 {
        // Options that contradict each other are a usage error (exit 64), before anything starts.
        if let conflict = configuration.conflictingOptions { throw UsageError(conflict.description) }
        signal(SIGPIPE, SIG_IGN)
        // From here on SIGTERM/SIGINT are recorded, not fatal; they are acted on once the server runs.
        ShutdownSignal.install()
        let app = try await DepotApp.start(configuration)
        FileHandle.standardOutput.write(Data("listening on \(app.baseURL)\n".utf8))
        if let ops = app.opsURL { FileHandle.standardOutput.write(Data("ops listener on \(ops)\n".utf8)) }
        let signal = await ShutdownSignal.wait()
        // Through the server's logger like every other line it writes from here on (operations.md §2).
        app.logger.info(.shutdown, "\(signal) received, finishing in-flight requests")
        await app.stop()
        return 0
    }
}

/// SIGTERM and SIGINT, turned into a graceful stop.
///
/// A handler (not `SIG_IGN` plus a dispatch source) writes the signal number to a pipe that a dedicated thread
/// reads. That thread unblocks both signals for itself, so the signals arrive even when the parent started the
/// server with them blocked (a blocked mask is inherited across exec: Foundation's `Process` does that, and
/// so may a supervisor); with `SIG_IGN`, a signal delivered to a thread that does not block it is lost.
enum ShutdownSignal {
    /// The pipe the handler writes to (plain integers: the handler touches nothing reference-counted).
    nonisolated(unsafe) static var readDescriptor: Int32 = -1
    nonisolated(unsafe) static var writeDescriptor: Int32 = -1

    /// Creates the pipe and installs the handlers. Call once, early.
    static func install() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        readDescriptor = fds[0]
        writeDescriptor = fds[1]
        for number in [SIGTERM, SIGINT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                // Async-signal-safe: one write(2) of one byte.
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(ShutdownSignal.writeDescriptor, &byte, 1)
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }

    /// Waits for the first SIGTERM or SIGINT; returns its name.
    static func wait() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let thread = Thread {
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, SIGTERM)
                sigaddset(&set, SIGINT)
                pthread_sigmask(SIG_UNBLOCK, &set, nil)
                var byte: UInt8 = 0
                while true {
                    let n = read(readDescriptor, &byte, 1)
                    if n == 1 || (n < 0 && errno != EINTR) || n == 0 { break }
                }
                continuation.resume(returning: Int32(byte) == SIGINT ? "SIGINT" : "SIGTERM")
            }
            thread.name = "depot-signals"
            thread.start()
        }
    }
}
