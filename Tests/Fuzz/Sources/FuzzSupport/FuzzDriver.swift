public import CFuzzer

/// Runs libFuzzer with the process's arguments, calling `target` with each input; never returns.
///
/// The targets have a `main` of their own (SwiftPM gives every executable one) and hand control to libFuzzer's
/// driver, instead of relying on the `main` of the fuzzer runtime.
public func runFuzzer(_ target: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    let status = withUnsafeMutablePointer(to: &argv) { arguments in
        arguments.withMemoryRebound(to: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?.self, capacity: 1) { rebound in
            LLVMFuzzerRunDriver(&argc, rebound, target)
        }
    }
    exit(status)
}

#if canImport(Glibc)
import Glibc
#endif
