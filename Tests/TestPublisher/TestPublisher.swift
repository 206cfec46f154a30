import ArgumentParsing
import DepotCommands
import Foundation
import Glibc
import Platform
import Synchronization

/// `depot publish` with test hooks the production `depot` does not have, for tests that must crash or fill
/// the disk in a child process:
///
///     depot-test-publisher [--crash-at N] [--free-bytes N] -- PUBLISH-ARGUMENTS...
///
/// `--crash-at N` kills the process with SIGKILL right after the N-th durable file operation of the publish;
/// `--free-bytes N` makes the content volume report N bytes free. The publish itself is the real command.
struct TestPublisher: Command {
    static let name = "depot-test-publisher"
    static let summary = "Run `depot publish` with a crash point or a fixed free space (tests only)."

    @Option("crash-at", .integer(in: 1...Int.max), help: "SIGKILL after the N-th durable file operation")
    var crashAt: Int?
    @Option("free-bytes", .integer(in: 0...Int64.max), help: "bytes the content volume reports free")
    var freeBytes: Int64?
    @Arguments(valueName: "-- PUBLISH-ARGUMENTS...") var publishArguments: [String]

    func run() async throws -> Int32 {
        let (crashAt, freeBytes) = (crashAt, freeBytes)
        let steps = StepCounter()
        let publish = CommandNode.command(PublishCommand.self) { command in
            if let freeBytes { command.space = FixedVolumeSpace(free: freeBytes) }
            if let crashAt {
                command.durableStepDone = { _ in
                    if steps.count.add(1, ordering: .relaxed).newValue == crashAt { kill(getpid(), SIGKILL) }
                }
            }
        }
        // Named like the real program, so messages read `depot: publish: …` as they do from `depot`.
        let runner = CommandLineRunner(.group("depot", summary: Self.summary, [publish]))
        return await runner.run(["publish"] + publishArguments, environment: ProcessInfo.processInfo.environment)
    }
}

/// Durable steps done so far (the publish runs on one thread; atomic only to be shared by a closure).
final class StepCounter: Sendable {
    let count = Atomic<Int>(0)
}

@main
struct TestPublisherMain {
    static func main() async {
        let status = await CommandLineRunner(.command(TestPublisher.self)).run(Array(CommandLine.arguments.dropFirst()),
                                                                              environment: ProcessInfo.processInfo.environment)
        exit(status)
    }
}
