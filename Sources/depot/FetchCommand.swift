import DepotServer

/// `depot fetch` (issue 6).
enum FetchCommand: Command {
    static let name = "fetch"
    static let synopsis = "--server URL (--receipt FILE | --transaction FILE) --pack ID --out DIR [--account A]"
    static let summary = "Validate a purchase and download its pack, resumably (the reference client)."
    static let options: [OptionSpec] = []
    static let takesPositional = false

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        Depot.fail("fetch: not available in this build")
    }
}

/// `depot demo` (issue 6).
enum DemoCommand: Command {
    static let name = "demo"
    static let synopsis = ""
    static let summary = "Tell the whole story on loopback with a simulated App Store."
    static let options: [OptionSpec] = []
    static let takesPositional = false

    static func run(_ arguments: ParsedArguments) async -> Int32 {
        Depot.fail("demo: not available in this build")
    }
}
