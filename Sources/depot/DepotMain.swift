import DepotCommands
import Foundation

/// The `depot` executable: the command table of `DepotCommands`, run with the process's arguments.
@main
struct DepotMain {
    static func main() async {
        let status = await DepotCommandLine.run(Array(CommandLine.arguments.dropFirst()),
                                                environment: ProcessInfo.processInfo.environment)
        exit(status)
    }
}
