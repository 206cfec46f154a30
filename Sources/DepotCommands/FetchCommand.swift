package import ArgumentParsing
import DepotClient
package import Foundation
import FoundationNetworking
import Platform
import Synchronization

/// `depot fetch`: the reference client on the command line (spec §5).
package struct FetchCommand: Command {
    package static let name = "fetch"
    package static let synopsis: String? =
        "--server URL (--receipt FILE | --transaction FILE | --token T) --pack ID --out DIR [--account A] [--parallel N]"
    package static let summary = "Validate a purchase and download its pack, resumably (the reference client)."

    @Option("server", .serverURL, help: "Depot base URL, e.g. http://127.0.0.1:8080")
    package var server: URL
    @Option("receipt", help: "app receipt file (binary, or base64 text)", valueName: "FILE")
    package var receipt: String?
    @Option("transaction", help: "file with a StoreKit 2 signed transaction (JWS); may be repeated", valueName: "FILE")
    package var transactions: [String] = []
    @Option("token", help: "an operator token (`depot token`) instead of a purchase", valueName: "TOKEN")
    package var token: String?
    @Option("pack", help: "the pack to download", valueName: "ID")
    package var pack: String
    @Option("out", help: "destination directory (re-running resumes there)", valueName: "DIR")
    package var out: String
    @Option("account", help: "app account the purchase is bound to", valueName: "ACCOUNT")
    package var account: String?
    @Option("parallel", .integer(in: 1...64), help: "chunk requests in flight at once")
    package var parallel = 4

    /// Exit status when the device is out of space: free some and run again to continue.
    static let insufficientSpaceStatus: Int32 = 75
    /// Exit status after Ctrl-C (128 + SIGINT, as shells report it).
    static let interruptedStatus: Int32 = 130

    package init() {}

    package func run() async throws -> Int32 {
        // Every run of chunks passes through a buffer of up to 4 MiB, received on a thread of its own and written
        // from another; glibc would map and unmap each one, and give each receiving thread an arena of its own (a
        // page fault per 4 KiB, every time). Keep them in the heap of one arena so the memory is reused.
        HeapTuning.keepLargeAllocationsInHeap(upTo: 64 << 20)
        HeapTuning.limitArenas(to: 1)
        let proofs = [receipt != nil, !transactions.isEmpty, token != nil].filter { $0 }.count
        guard proofs == 1 else { throw UsageError("give exactly one of --receipt FILE, --transaction FILE or --token TOKEN") }
        let client = DepotClient(baseURL: server, cacheDirectory: nil,
                                 exchanger: SocketHTTPExchanger(fallback: URLSessionExchanger(session: .shared)))
        let downloader: PackDownloader
        if let token {
            downloader = PackDownloader(client: client, pack: pack, token: token, destination: URL(fileURLWithPath: out),
                                        options: PackDownloadOptions(parallelChunks: parallel))
            say("using an operator token for pack \(pack)")
        } else {
            downloader = try await unlockedDownloader(client)
        }
        // Ctrl-C stops after the chunks in flight (they are verified and kept); a second one ends at once.
        ShutdownSignal.install()
        let interrupted = Interruption()
        Task.detached {
            _ = await ShutdownSignal.wait()
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
            interrupted.set()
            await downloader.pause()
        }
        var bar = ProgressBar()
        do {
            for try await event in downloader.download() {
                switch event {
                case .updating(let from, let reuse, let fetch):
                    say("updating from version \(from): \(ProgressBar.bytes(reuse)) to copy from it, \(ProgressBar.bytes(fetch)) to fetch (written beside it; it stays whole until the switch)")
                case .started(let manifest, let resumed):
                    if resumed > 0 {
                        say("resuming version \(manifest.version): \(ProgressBar.bytes(resumed)) of \(ProgressBar.bytes(manifest.downloadBytes)) already verified")
                    } else {
                        say("downloading version \(manifest.version): \(manifest.files.count) files, \(ProgressBar.bytes(manifest.downloadBytes))")
                    }
                case .progress(let progress):
                    bar.show(progress)
                case .chunkRejected(let path, let chunk):
                    bar.finish()
                    say("chunk \(chunk) of \(path) failed its SHA-256 check; fetching it again")
                case .fileRestarted(let path):
                    bar.finish()
                    say("\(path) changed on the server; starting that file over")
                case .completed(let manifest):
                    bar.finish()
                    if manifest.delta != nil {
                        let progress = await downloader.progress
                        say("updated to version \(manifest.version): reused \(Self.mebibytes(progress.reusedBytes)) MiB, fetched \(Self.mebibytes(progress.fetchedBytes)) MiB")
                    }
                    say("done: \(manifest.files.count) files, \(manifest.downloadBytes) bytes, every chunk verified (SHA-256) in \(out)")
                case .paused:
                    bar.finish()
                    let verified = await downloader.progress
                    say("interrupted: \(verified.completedBytes) of \(verified.totalBytes) bytes are verified and kept; "
                        + "run the same command again to resume")
                    return Self.interruptedStatus
                case .tokenRenewed, .cancelled, .failed, .insufficientSpace:
                    bar.finish()
                }
            }
            return interrupted.isSet ? Self.interruptedStatus : 0
        } catch DepotClientError.insufficientSpace(let required, let available) {
            FileHandle.standardError.write(Data("depot: fetch: not enough free space: \(required) bytes needed, \(available) available. Free some space and run the same command again to continue.\n".utf8))
            return Self.insufficientSpaceStatus
        } catch {
            throw CommandFailure("\(Self.describe(error)); run the same command again to resume")
        }
    }

    /// Bytes as MiB with one decimal.
    static func mebibytes(_ bytes: Int64) -> String {
        String(format: "%.1f", Double(bytes) / 1_048_576)
    }

    /// Validates the receipt or transactions and returns a downloader for the pack they unlock (renewing its
    /// token by validating them again).
    private func unlockedDownloader(_ client: DepotClient) async throws -> PackDownloader {
        let (pack, account) = (pack, account)
        let unlock: @Sendable () async throws -> UnlockResult
        if let receiptFile = receipt {
            guard let data = FileManager.default.contents(atPath: receiptFile) else { throw CommandFailure("cannot read \(receiptFile)") }
            unlock = { try await client.unlock(receipt: data, account: account) }
        } else {
            var jws: [String] = []
            for file in transactions {
                guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure("cannot read \(file)") }
                jws.append(contentsOf: String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init))
            }
            let transactions = jws
            unlock = { try await client.unlock(transactions: transactions, account: account) }
        }
        let result: UnlockResult
        do {
            result = try await unlock()
        } catch {
            throw CommandFailure(Self.describe(error))
        }
        guard let entitlement = result.entitlement(forPack: pack) else {
            let reasons = result.rejected.map { "\($0.productId ?? "?"): \($0.reason.rawValue)" }
            throw CommandFailure("the purchase does not unlock pack \(pack)" + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))"))
        }
        say("unlocked \(entitlement.productId) → pack \(pack) (transaction \(entitlement.originalTransactionId))")
        return client.downloader(for: entitlement, to: URL(fileURLWithPath: out), options: PackDownloadOptions(parallelChunks: parallel),
                                 renewToken: {
            // An expired token: validate the purchase again for a fresh one.
            try await unlock().token(forPack: pack)
        })
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? DepotClientError else { return "\(error)" }
        switch error {
        case .retryLater(let after): return "the server asks to retry later" + (after.map { " (in \(Int($0)) s)" } ?? "")
        case .invalidReceipt(let status, let check):
            return "the purchase is not valid" + (status.map { " (Apple status \($0))" } ?? "") + (check.map { " (check: \($0))" } ?? "")
        default: return "\(error)"
        }
    }
}

extension OptionParser where Value == URL {
    /// An `http://` or `https://` URL with a host (`http://` is fetched with the built-in HTTP/1.1 client, `https://`
    /// with URLSession).
    static var serverURL: OptionParser<URL> {
        OptionParser(valueName: "URL", parse: { (text: String) throws(InvalidOptionValue) -> URL in
            let scheme = text.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() }
            guard let url = URL(string: text), scheme == "http" || scheme == "https", url.host != nil else {
                throw InvalidOptionValue("\"\(text)\" needs http:// or https:// and a host, e.g. http://127.0.0.1:8080")
            }
            return url
        }, format: { $0.absoluteString })
    }
}

/// Set once Ctrl-C (or SIGTERM) arrived.
final class Interruption: Sendable {
    private let flag = Atomic<Bool>(false)

    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}
