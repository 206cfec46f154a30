import DepotTestSupport
import Foundation
import HTTP
import Server
import Synchronization
import Testing

/// SplitMix64: a small seeded generator, so a failing run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Makes damaged requests: random bytes, mutated and truncated valid requests, random header soup.
struct RequestFuzzer {
    var random: SeededGenerator

    static let templates: [String] = [
        get("/hello"),
        get("/remote?tag=fuzz"),
        get("/file"),
        "HEAD /file HTTP/1.1\r\nHost: t\r\n\r\n",
        get("/later?ms=1"),
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello",
        "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc",
        "POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n0123456789",
        "POST /stream HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "POST /ignore HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody",
        "GET http://t/hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        "GET /hello HTTP/1.0\r\n\r\n",
        get("/hello") + get("/later?ms=1") + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nok",
    ]

    static let fieldNames = ["Host", "Content-Length", "Transfer-Encoding", "Expect", "Connection", "X-A", "Range",
                             "content-length", "TRANSFER-ENCODING", "If-None-Match", "", " Host", "Host ", "X\u{0}"]
    static let fieldValues = ["t", "0", "5", "-1", "99999999999999999999", "chunked", "gzip, chunked", "chunked, chunked",
                              "100-continue", "close", "keep-alive", "", " ", "\u{1}", "a\rb", "5, 5", "0x10",
                              String(repeating: "v", count: 3000)]
    static let lineEnds = ["\r\n", "\n", "\r", "\r\r\n", ""]
    static let interesting: [UInt8] = [0x00, 0x0D, 0x0A, 0x20, 0x09, 0x3A, 0x3B, 0x7F, 0xFF, 0x30, 0x39, 0x66]

    mutating func next() -> [UInt8] {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return randomBytes()
        case 1: return mutated()
        case 2: return truncated()
        default: return headerSoup()
        }
    }

    mutating func randomBytes() -> [UInt8] {
        (0..<Int.random(in: 0...2000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    mutating func template() -> [UInt8] { Array(Self.templates.randomElement(using: &random)!.utf8) }

    mutating func mutated() -> [UInt8] {
        var bytes = template()
        for _ in 0..<Int.random(in: 1...6, using: &random) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes[at] = Self.interesting.randomElement(using: &random)!
            case 2: bytes.remove(at: at)
            case 3: bytes.insert(Self.interesting.randomElement(using: &random)!, at: at)
            case 4:
                let end = min(bytes.count, at + Int.random(in: 1...40, using: &random))
                bytes.insert(contentsOf: bytes[at..<end], at: at)
            default:
                bytes.insert(contentsOf: Array("\r\nContent-Length: 7\r\n".utf8), at: at)
            }
        }
        return bytes
    }

    mutating func truncated() -> [UInt8] {
        let bytes = template()
        return Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
    }

    mutating func headerSoup() -> [UInt8] {
        let methods = ["GET", "POST", "HEAD", "PUT", "get", "G E T", ""]
        let paths = ["/hello", "/echo", "/stream", "/ignore", "/nowhere", "*", "http://x/hello", "/" + String(repeating: "p", count: 9000)]
        let versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1 ", "HTTP/1"]
        var text = "\(methods.randomElement(using: &random)!) \(paths.randomElement(using: &random)!) "
            + versions.randomElement(using: &random)! + "\r\n"
        for _ in 0..<Int.random(in: 0...120, using: &random) {
            text += Self.fieldNames.randomElement(using: &random)! + ": " + Self.fieldValues.randomElement(using: &random)!
                + Self.lineEnds.randomElement(using: &random)!
        }
        text += Self.lineEnds.randomElement(using: &random)!
        if Bool.random(using: &random) { text += String(repeating: "b", count: Int.random(in: 0...200, using: &random)) }
        return Array(text.utf8)
    }
}

extension ServerTests {
    @Suite("Engine: random and damaged requests")
    struct FuzzTests {
        @Test("thousands of random, mutated and truncated requests leave the server answering correctly")
        func fuzz() async throws {
            let server = try TestServer(headerTimeout: 2000, idleTimeout: 2000, writeTimeout: 2000)
            let workers = 4
            let casesPerWorker = 750
            let problems = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                var fuzzer = RequestFuzzer(random: SeededGenerator(seed: 0xDE90_7000 + UInt64(worker)))
                for index in 0..<casesPerWorker {
                    if problems.withLock({ $0.count }) >= 5 { return }
                    let bytes = fuzzer.next()
                    let style = Int.random(in: 0..<8, using: &fuzzer.random)
                    guard let connection = try? server.connect() else {
                        problems.withLock { $0.append("worker \(worker) case \(index): cannot connect") }
                        return
                    }
                    connection.send(bytes)
                    switch style {
                    case 0:
                        connection.setResetOnClose()   // vanish with a reset, answer unread
                    case 1:
                        break                          // vanish with a FIN, answer unread
                    default:
                        connection.shutdownWrite()
                        let (answer, closed) = connection.readUntilClose(timeout: 4)
                        if !closed {
                            problems.withLock { $0.append("worker \(worker) case \(index): not closed: \(bytes.prefix(80))") }
                        } else if !answer.isEmpty, !answer.starts(with: Array("HTTP/1.1 ".utf8)) {
                            problems.withLock { $0.append("worker \(worker) case \(index): garbage answer") }
                        }
                    }
                }
            }
            #expect(problems.withLock { $0 } == [])

            // The server still answers a normal request correctly, on a new and on a keep-alive connection.
            let connection = try server.connect()
            for _ in 0..<3 {
                connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
                let response = try connection.readResponse()
                #expect(response.status == 200)
                #expect(response.text == "hello")
            }
            connection.send(get("/file"))
            #expect(try connection.readResponse().body == patternBytes(100_000))
            // Nothing is left behind: every connection but this one ends, every sink is finished or aborted.
            #expect(await eventually(attempts: 500) { server.server.openConnections == 1 }, "\(server.server.openConnections) open")
            #expect(await eventually { server.responder.sinks.allSatisfy { $0.snapshot.finished || $0.snapshot.aborted } })
            print("[fuzz] \(workers * casesPerWorker) cases, \(server.responder.requestCount) reached the responder, "
                  + "\(server.responder.sinks.count) streamed")
            await server.stop()
        }
    }
}
