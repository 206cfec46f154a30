import AppStore
import AppStoreSimulator
import DepotCore
import DepotCrypto
import Foundation

/// Helpers the benchmark scripts run (release build): a simulated App Store in its own process, and
/// CPU-cost measurements of JWS verification and of App Store Server API token signing, and signed purchases
/// with their V2 refund notifications for the scale-out benchmark.
///
///     depot-bench appstore --delay-ms 100 --receipts 50000 --out DIR [--product ID[,ID...]] [--api-receipts N]
///     depot-bench signed --count 30000 --out DIR [--product ID]
///     depot-bench jws --iterations 5000
///     depot-bench jwt --iterations 5000
@main
struct DepotBench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let usage = """
            usage: depot-bench appstore --out DIR [--delay-ms MS] [--receipts N] [--product ID[,ID...]] [--api-receipts N]
                   depot-bench signed --out DIR [--count N] [--product ID]
                   depot-bench jws [--iterations N]
                   depot-bench jwt [--iterations N]

            """
        // Options come in `--name value` pairs; anything else (including --help) prints the usage. `appstore`
        // requires `--out`, so its files never land in whatever directory the command happens to run in.
        let known: Set<String> = switch arguments.first {
        case "appstore": ["out", "delay-ms", "receipts", "product", "api-receipts"]
        case "signed": ["out", "count", "product"]
        default: ["iterations"]
        }
        var options: [String: String] = [:]
        var i = 1
        while i + 1 < arguments.count, arguments[i].hasPrefix("--"), known.contains(String(arguments[i].dropFirst(2))) {
            options[String(arguments[i].dropFirst(2))] = arguments[i + 1]
            i += 2
        }
        guard i == arguments.count, ["appstore", "signed", "jws", "jwt"].contains(arguments.first ?? ""),
              !["appstore", "signed"].contains(arguments.first ?? "") || options["out"] != nil else {
            FileHandle.standardError.write(Data(usage.utf8))
            exit(64)
        }
        switch arguments.first {
        case "appstore":
            try await appStore(delay: Double(options["delay-ms"] ?? "100")! / 1000, receipts: Int(options["receipts"] ?? "10000")!,
                               out: options["out"]!, product: options["product"] ?? "com.example.depot.level2",
                               apiReceipts: Int(options["api-receipts"] ?? "0")!)
        case "signed":
            try signed(count: Int(options["count"] ?? "10000")!, out: options["out"]!, product: options["product"] ?? "com.example.depot.level2")
        case "jwt":
            try jwt(iterations: Int(options["iterations"] ?? "5000")!)
        default:
            try jws(iterations: Int(options["iterations"] ?? "5000")!)
        }
    }

    /// Starts a simulated App Store answering after `delay`, issues receipts (one per line in `receipts.txt`),
    /// writes a test PKI root (`root.pem`) and signed transactions (`transactions.txt`), prints the URL and waits.
    /// `product` may list several IDs separated by commas: each receipt then holds one purchase of each; the
    /// transactions are for the first. With `apiReceipts`, that many customers buy the first product in the
    /// store's App Store Server API, and their minted app receipts go to `api-receipts.txt`, with the API's
    /// root (`api-root.pem`), its In-App Purchase key (`api-key.p8`, ID and issuer in `api-key.txt`); the
    /// printed line then adds the API's production and sandbox URLs.
    static func appStore(delay: Double, receipts count: Int, out: String, product products: String, apiReceipts: Int) async throws {
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
        var apiURLs = ""
        if apiReceipts > 0 {
            let api = store.serverAPI
            var minted = ""
            minted.reserveCapacity(apiReceipts * 1600)
            for i in 0..<apiReceipts {
                let purchase = api.purchase(product, customer: "customer-\(i)", purchaseDate: Date().addingTimeInterval(-86_400))
                minted += try api.appReceipt(transactionIDs: [purchase.transactionID]) + "\n"
            }
            try minted.write(toFile: out + "/api-receipts.txt", atomically: true, encoding: .utf8)
            try api.pki.rootPEM.write(toFile: out + "/api-root.pem", atomically: true, encoding: .utf8)
            try api.key.pkcs8PEM.write(toFile: out + "/api-key.p8", atomically: true, encoding: .utf8)
            try "\(api.key.keyID) \(api.key.issuerID)\n".write(toFile: out + "/api-key.txt", atomically: true, encoding: .utf8)
            apiURLs = " \(store.apiURL.absoluteString) \(store.apiSandboxURL.absoluteString)"
        }
        FileHandle.standardOutput.write(Data("appstore \(store.productionURL.absoluteString) \(store.sandboxURL.absoluteString)\(apiURLs)\n".utf8))
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// Writes a run-time test PKI's root (`root.pem`), `count` StoreKit 2 transactions of `product` signed by it
    /// (`transactions.txt`, one JWS a line, transaction IDs 5000000000000 + line index) and, line for line, a
    /// signed V2 `REFUND` notification of each (`refunds.txt`: the `signedPayload`, a fresh `notificationUUID`
    /// each, revocation date a minute ago), then prints `signed COUNT`.
    static func signed(count: Int, out: String, product: String) throws {
        let now = Date()
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-3600), validUntil: now.addingTimeInterval(86_400))
        try pki.rootPEM.write(toFile: out + "/root.pem", atomically: true, encoding: .utf8)
        let signer = TransactionSigner(pki: pki)
        var transactions = ""
        var refunds = ""
        transactions.reserveCapacity(count * 1_600)
        refunds.reserveCapacity(count * 3_800)
        for i in 0..<count {
            let transaction = TransactionSigner.Transaction(transactionId: String(5_000_000_000_000 + i), bundleId: "com.example.depot",
                                                            productId: product, purchaseDate: now.addingTimeInterval(-3600),
                                                            environment: "Production")
            transactions += try signer.signedTransaction(transaction) + "\n"
            var refunded = transaction
            refunded.revocationDate = now.addingTimeInterval(-60)
            refunded.revocationReason = 0
            refunds += try signer.signedNotification(.refund, transaction: refunded, signedDate: now) + "\n"
        }
        try transactions.write(toFile: out + "/transactions.txt", atomically: true, encoding: .utf8)
        try refunds.write(toFile: out + "/refunds.txt", atomically: true, encoding: .utf8)
        print("signed \(count)")
    }

    /// CPU time of one StoreKit 2 JWS verification (cached chain), median of 5 runs.
    static func jws(iterations: Int) throws {
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

    /// CPU time of signing one App Store Server API token (ES256 JWT), and of handing out a reused one, median of 5 runs.
    static func jwt(iterations: Int) throws {
        let key = try SimulatedAPIKey.generate()
        let issuer = ServerAPITokenIssuer(key: try ServerAPIKey(keyID: key.keyID, issuerID: key.issuerID, privateKey: key.privateKey),
                                          bundleID: "com.example.depot")
        let now = Int64(Date().timeIntervalSince1970)
        var signing: [Double] = []
        var reuse: [Double] = []
        for _ in 0..<5 {
            let start = cpuSeconds()
            for i in 0..<iterations { _ = try issuer.sign(issuedAt: now + Int64(i)) }
            signing.append((cpuSeconds() - start) / Double(iterations))
            let date = Date()
            let reused = cpuSeconds()
            for _ in 0..<(iterations * 10) { _ = try issuer.token(now: date) }
            reuse.append((cpuSeconds() - reused) / Double(iterations * 10))
        }
        signing.sort()
        reuse.sort()
        print(String(format: "jwt signing: %.1f µs CPU per signed token (median of 5 × %d), %.2f µs per reused token",
                     signing[2] * 1e6, iterations, reuse[2] * 1e6))
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
