import DepotServer
import Dispatch
import Foundation

/// `depot serve`: runs the server until SIGTERM or SIGINT.
enum ServeCommand: Command {
    static let name = "serve"
    static let synopsis = "[options]"
    static let summary = "Serve the product lists, purchases and packs over HTTP."
    static let options = DepotConfiguration.serveOptions
    static let takesPositional = false

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        let configuration: DepotConfiguration
        do {
            configuration = try DepotConfiguration(arguments.values)
        } catch {
            return Depot.fail("\(error)")
        }
        // Signals are taken by dispatch sources, so no thread is killed by the default action.
        signal(SIGPIPE, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let app: DepotApp
        do {
            app = try await DepotApp.start(configuration)
        } catch {
            return Depot.fail("\(error)")
        }
        FileHandle.standardOutput.write(Data("listening on \(app.baseURL)\n".utf8))
        let signal = await ShutdownSignal.wait()
        FileHandle.standardError.write(Data("depot: \(signal), finishing in-flight requests\n".utf8))
        await app.stop()
        return 0
    }
}

/// Waits for SIGTERM or SIGINT.
enum ShutdownSignal {
    static func wait() async -> String {
        await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let queue = DispatchQueue(label: "depot.signals")
            let once = Once()
            var sources: [DispatchSourceSignal] = []
            for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    if once.claim() { continuation.resume(returning: name) }
                }
                source.resume()
                sources.append(source)
            }
            Retained.sources = sources
        }
    }

    final class Once: @unchecked Sendable {
        // Only touched on the serial signal queue.
        private var done = false
        func claim() -> Bool {
            if done { return false }
            done = true
            return true
        }
    }

    enum Retained {
        nonisolated(unsafe) static var sources: [DispatchSourceSignal] = []
    }
}
