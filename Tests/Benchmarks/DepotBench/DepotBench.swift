import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation

/// Helpers the benchmark scripts run (release build): a simulated App Store in its own process, and a
/// CPU-cost measurement of JWS verification.
///
///     depot-bench appstore --delay-ms 100 --receipts 50000 --out DIR [--product ID[,ID...]]
///     depot-bench jws --iterations 5000
@main
struct DepotBench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        func value(_ name: String, _ fallback: String) -> String {
            guard let i = arguments.firstIndex(of: "--" + name), i + 1 < arguments.count else { return fallback }
            return arguments[i + 1]
        }
        switch arguments.first {
        case "appstore":
            try await appStore(delay: Double(value("delay-ms", "100"))! / 1000, receipts: Int(value("receipts", "10000"))!,
                               out: value("out", "."), product: value("product", "com.example.depot.level2"))
        case "jws":
            try jws(iterations: Int(value("iterations", "5000"))!, out: value("out", "."))
        default:
            FileHandle.standardError.write(Data("usage: depot-bench appstore|jws [options]\n".utf8))
            exit(64)
        }
    }

    /// Starts a simulated App Store answering after `delay`, issues receipts (one per line in `receipts.txt`),
    /// writes a test PKI root (`root.pem`) and signed transactions (`transactions.txt`), prints the URL and waits.
    /// `product` may list several IDs separated by commas: each receipt then holds one purchase of each; the
    /// transactions are for the first.
    static func appStore(delay: Double, receipts count: Int, out: String, product products: String) async throws {
        let store = try SimulatedAppStore(bundleID: "com.example.depot", responseDelay: delay)
        let productIDs = products.split(separator: ",").map(String.init)
        let product = productIDs[0]
        var lines = ""
        lines.reserveCapacity(count * 80)
        for i in 0..<count {
            let purchases = productIDs.enumerated().map { j, id in
                SimulatedAppStore.Purchase(productID: id, transactionID: String(3_000_000_000_000 + i * productIDs.count + j))
            }
            lines += store.issueReceipt(purchases) + "\n"
        }
        try lines.write(toFile: out + "/receipts.txt", atomically: true, encoding: .utf8)
        let pki = try TestPKI.generate(validFrom: Date().addingTimeInterval(-3600), validUntil: Date().addingTimeInterval(86_400))
        try pki.rootPEM.write(toFile: out + "/root.pem", atomically: true, encoding: .utf8)
        let signer = TransactionSigner(pki: pki)
        var transactions = ""
        for i in 0..<min(count, 2000) {
            transactions += try signer.signedTransaction(.init(transactionId: String(4_000_000_000_000 + i), bundleId: "com.example.depot",
                                                               productId: product, purchaseDate: Date(), environment: "Production")) + "\n"
        }
        try transactions.write(toFile: out + "/transactions.txt", atomically: true, encoding: .utf8)
        FileHandle.standardOutput.write(Data("appstore \(store.productionURL.absoluteString) \(store.sandboxURL.absoluteString)\n".utf8))
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// CPU time of one StoreKit 2 JWS verification (cached chain), median of 5 runs.
    static func jws(iterations: Int, out: String) throws {
        let pki = try TestPKI.generate(validFrom: Date().addingTimeInterval(-3600), validUntil: Date().addingTimeInterval(86_400))
        let signer = TransactionSigner(pki: pki)
        let jws = try signer.signedTransaction(.init(transactionId: "1", bundleId: "com.example.depot", productId: "p",
                                                     purchaseDate: Date(), environment: "Production"))
        let verifier = SignedDataVerifier(trustedRoots: [pki.root], bundleID: "com.example.depot", allowSandbox: true)
        let cold = cpuSeconds()
        guard case .success = verifier.verifyTransaction(jws, now: Date()) else { fatalError("the JWS does not verify") }
        let first = cpuSeconds() - cold
        var runs: [Double] = []
        for _ in 0..<5 {
            let start = cpuSeconds()
            for _ in 0..<iterations { _ = verifier.verifyTransaction(jws, now: Date()) }
            runs.append((cpuSeconds() - start) / Double(iterations))
        }
        runs.sort()
        print(String(format: "jws verification: %.1f µs CPU per verification with a cached chain (median of 5 × %d), first (chain validated) %.1f µs",
                     runs[2] * 1e6, iterations, first * 1e6))
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
