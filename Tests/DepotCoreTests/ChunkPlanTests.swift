import DepotWire
import Foundation
import Testing
import DepotCore

/// spec §4.4 "Disk-space-aware plan": reserve, `next`, `fits`, `remainingBytes`, and the 400 cases.
@Suite struct ChunkPlanTests {
    static let mib: Int64 = 1 << 20

    /// A manifest whose files have these sizes (chunks tiled by `chunkSize`, dummy hashes).
    static func manifest(_ files: [(String, Int64)], chunkSize: Int64 = mib) -> PackManifest {
        let entries = files.map { path, size in
            PackManifest.File(path: path, size: size, sha256: "00", etag: "\"00\"",
                              url: PackManifest.url(pack: "p", version: 1, path: path),
                              chunks: PackManifest.chunkRanges(size: size, chunkSize: chunkSize).map {
                                  PackManifest.Chunk(offset: $0.offset, length: $0.length, sha256: "00")
                              })
        }
        return PackManifest(pack: "p", version: 1, productId: "com.example.p", chunkSize: chunkSize,
                            published: "2026-01-01T00:00:00Z", files: entries)
    }

    /// a.bin: 2.5 MiB (1, 1, 0.5), b.bin: empty, c.bin: 3 MiB (1, 1, 1) — 5.5 MiB in all.
    static let threeFiles = manifest([("a.bin", 5 * mib / 2), ("b.bin", 0), ("c.bin", 3 * mib)])
    /// x.bin: 1.5 MiB (1, 0.5), y.bin: 0.25 MiB — a later chunk is smaller than the first.
    static let smallTail = manifest([("x.bin", 3 * mib / 2), ("y.bin", mib / 4)])

    // MARK: - Reserve

    struct ReserveRow: Sendable, CustomTestStringConvertible {
        let available: Int64
        let reserve: Int64
        var testDescription: String { "available \(available) → reserve \(reserve)" }
    }

    // max(16 MiB, floor(2 % of available)).
    static let reserveRows: [ReserveRow] = [
        ReserveRow(available: 0, reserve: 16 * mib),
        ReserveRow(available: 100, reserve: 16 * mib),
        ReserveRow(available: 838_860_799, reserve: 16 * mib),          // 2 % = 16 777 215.98
        ReserveRow(available: 838_860_800, reserve: 16 * mib),          // 2 % = exactly 16 MiB
        ReserveRow(available: 838_860_850, reserve: 16_777_217),        // 2 % = 16 777 217
        ReserveRow(available: 1_000_000_049, reserve: 20_000_000),      // floor(20 000 000.98)
        ReserveRow(available: 2_147_483_648, reserve: 42_949_672),      // 2 GiB: floor(42 949 672.96)
        ReserveRow(available: 100_000_000_000_000_000, reserve: 2_000_000_000_000_000),
    ]

    @Test(arguments: reserveRows)
    func reserve(_ row: ReserveRow) throws {
        #expect(ChunkPlan.reserve(forAvailable: row.available) == row.reserve)
        let plan = try ChunkPlan.make(manifest: Self.threeFiles, available: String(row.available), have: nil)
        #expect(plan.reserveBytes == row.reserve)
        #expect(plan.availableBytes == row.available)
    }

    // MARK: - Plans

    struct PlanRow: Sendable, CustomTestStringConvertible {
        let name: String
        let manifest: PackManifest
        let available: Int64
        let have: Int64?
        let remaining: Int64
        let fits: Bool
        /// (path, offset in the file, length), one per chunk.
        let next: [Step]
        struct Step: Sendable, Equatable {
            let path: String
            let offset: Int64
            let length: Int64
            init(_ path: String, _ offset: Int64, _ length: Int64) { self.path = path; self.offset = offset; self.length = length }
        }
        var testDescription: String { name }
    }

    static let reserve16 = 16 * mib
    static let planRows: [PlanRow] = {
        typealias S = PlanRow.Step
        let m = mib, half = mib / 2
        let allSix = [S("a.bin", 0, m), S("a.bin", m, m), S("a.bin", 2 * m, half), S("c.bin", 0, m), S("c.bin", m, m), S("c.bin", 2 * m, m)]
        return [
            PlanRow(name: "everything fits", manifest: threeFiles, available: 100 * m, have: nil,
                    remaining: 11 * half, fits: true, next: allSix),
            PlanRow(name: "exactly remaining + reserve fits", manifest: threeFiles, available: reserve16 + 11 * half, have: nil,
                    remaining: 11 * half, fits: true, next: allSix),
            PlanRow(name: "one byte short of everything", manifest: threeFiles, available: reserve16 + 11 * half - 1, have: nil,
                    remaining: 11 * half, fits: false, next: Array(allSix.prefix(5))),
            PlanRow(name: "room for exactly one chunk", manifest: threeFiles, available: reserve16 + m, have: nil,
                    remaining: 11 * half, fits: false, next: [S("a.bin", 0, m)]),
            PlanRow(name: "one byte short of one chunk", manifest: threeFiles, available: reserve16 + m - 1, have: nil,
                    remaining: 11 * half, fits: false, next: []),
            PlanRow(name: "nothing available", manifest: threeFiles, available: 0, have: nil,
                    remaining: 11 * half, fits: false, next: []),
            PlanRow(name: "less than the reserve", manifest: threeFiles, available: 10 * m, have: 0,
                    remaining: 11 * half, fits: false, next: []),
            PlanRow(name: "whole first file incl. short last chunk", manifest: threeFiles, available: reserve16 + 5 * half, have: 0,
                    remaining: 11 * half, fits: false, next: Array(allSix.prefix(3))),
            PlanRow(name: "have mid-file", manifest: threeFiles, available: reserve16 + 3 * half, have: m,
                    remaining: 9 * half, fits: false, next: [S("a.bin", m, m), S("a.bin", 2 * m, half)]),
            PlanRow(name: "have at a file boundary, across an empty file", manifest: threeFiles, available: reserve16 + 2 * m, have: 5 * half,
                    remaining: 3 * m, fits: false, next: [S("c.bin", 0, m), S("c.bin", m, m)]),
            PlanRow(name: "have at a file boundary, rest fits", manifest: threeFiles, available: reserve16 + 3 * m, have: 5 * half,
                    remaining: 3 * m, fits: true, next: [S("c.bin", 0, m), S("c.bin", m, m), S("c.bin", 2 * m, m)]),
            PlanRow(name: "have inside the last file", manifest: threeFiles, available: 100 * m, have: 7 * half,
                    remaining: 2 * m, fits: true, next: [S("c.bin", m, m), S("c.bin", 2 * m, m)]),
            PlanRow(name: "have == downloadBytes", manifest: threeFiles, available: 100 * m, have: 11 * half,
                    remaining: 0, fits: true, next: []),
            PlanRow(name: "have == downloadBytes with no space", manifest: threeFiles, available: 0, have: 11 * half,
                    remaining: 0, fits: true, next: []),
            PlanRow(name: "a run stops at the first chunk that does not fit", manifest: smallTail, available: reserve16 + 3 * m / 4, have: nil,
                    remaining: 7 * m / 4, fits: false, next: []),
            PlanRow(name: "run continues into the next file", manifest: smallTail, available: reserve16 + 3 * m / 4, have: m,
                    remaining: 3 * m / 4, fits: true, next: [S("x.bin", m, half), S("y.bin", 0, m / 4)]),
            PlanRow(name: "2 % reserve dominates", manifest: threeFiles, available: 2_147_483_648, have: nil,
                    remaining: 11 * half, fits: true, next: allSix),
            PlanRow(name: "empty pack", manifest: manifest([("e.bin", 0)]), available: 0, have: 0,
                    remaining: 0, fits: true, next: []),
        ]
    }()

    @Test(arguments: planRows)
    func plan(_ row: PlanRow) throws {
        let plan = try ChunkPlan.make(manifest: row.manifest, available: String(row.available), have: row.have.map { String($0) })
        #expect(plan.availableBytes == row.available)
        #expect(plan.reserveBytes == ChunkPlan.reserve(forAvailable: row.available))
        #expect(plan.remainingBytes == row.remaining)
        #expect(plan.remainingBytes == row.manifest.downloadBytes - (row.have ?? 0))
        #expect(plan.fits == row.fits)
        #expect(plan.next.map { PlanRow.Step($0.path, $0.offset, $0.length) } == row.next)
        // Invariant: the run fits in available - reserve.
        #expect(plan.next.reduce(0) { $0 + $1.length } <= max(0, row.available - plan.reserveBytes))
    }

    /// The numeric entry point agrees with the text one.
    @Test(arguments: planRows)
    func numericEntryPoint(_ row: PlanRow) throws {
        let fromText = try ChunkPlan.make(manifest: row.manifest, available: String(row.available), have: row.have.map { String($0) })
        let fromNumbers = try ChunkPlan.make(manifest: row.manifest, available: row.available, have: row.have ?? 0)
        #expect(fromText == fromNumbers)
    }

    // MARK: - Refusals (400)

    struct BadRow: Sendable, CustomTestStringConvertible {
        let available: String
        let have: String?
        let failure: ChunkPlan.Failure
        var testDescription: String { "available=\(available.debugDescription) have=\(have.map(\.debugDescription) ?? "-") → \(failure)" }
    }

    static let badRows: [BadRow] = [
        BadRow(available: "-1", have: nil, failure: .badAvailable),
        BadRow(available: "abc", have: nil, failure: .badAvailable),
        BadRow(available: "", have: nil, failure: .badAvailable),
        BadRow(available: "+5", have: nil, failure: .badAvailable),
        BadRow(available: " 5", have: nil, failure: .badAvailable),
        BadRow(available: "5 ", have: nil, failure: .badAvailable),
        BadRow(available: "5.0", have: nil, failure: .badAvailable),
        BadRow(available: "1e9", have: nil, failure: .badAvailable),
        BadRow(available: "0x10", have: nil, failure: .badAvailable),
        BadRow(available: "١٢٣", have: nil, failure: .badAvailable),  // Arabic-Indic digits
        BadRow(available: "-1", have: "1", failure: .badAvailable),
        BadRow(available: "1000", have: "1", failure: .badHave),
        BadRow(available: "1000", have: String(mib - 1), failure: .badHave),
        BadRow(available: "1000", have: String(5 * mib / 2 + 1), failure: .badHave),
        BadRow(available: "1000", have: String(11 * mib / 2 + 1), failure: .badHave),
        BadRow(available: "1000", have: String(11 * mib / 2 - 1), failure: .badHave),
        BadRow(available: "1000", have: "-1", failure: .badHave),
        BadRow(available: "1000", have: "", failure: .badHave),
        BadRow(available: "1000", have: "x", failure: .badHave),
        BadRow(available: "1000", have: "99999999999999999999999", failure: .badHave),
    ]

    @Test(arguments: badRows)
    func refused(_ row: BadRow) {
        #expect(throws: row.failure) {
            try ChunkPlan.make(manifest: Self.threeFiles, available: row.available, have: row.have)
        }
    }

    /// A non-negative integer too large for Int64 is still one (spec §4.4): it plans as Int64.max, everything fits.
    @Test(arguments: ["9223372036854775807", "9223372036854775808", "18446744073709551616", "99999999999999999999999"])
    func hugeAvailableIsAccepted(_ text: String) throws {
        let plan = try ChunkPlan.make(manifest: Self.threeFiles, available: text, have: nil)
        #expect(plan.fits)
        #expect(plan.availableBytes == Int64.max)
    }

    @Test func negativeNumbersAreRefused() {
        #expect(throws: ChunkPlan.Failure.badAvailable) { try ChunkPlan.make(manifest: Self.threeFiles, available: -1, have: 0) }
        #expect(throws: ChunkPlan.Failure.badHave) { try ChunkPlan.make(manifest: Self.threeFiles, available: 0, have: -1) }
    }

    // MARK: - JSON

    /// A JSON number as Int64 (JSONSerialization hands out NSNumber or Int depending on the platform).
    func int64(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }

    @Test func encodedHasExactlyTheSpecFields() throws {
        let plan = try ChunkPlan.make(manifest: Self.threeFiles, available: Self.reserve16 + 2 * Self.mib, have: Self.mib)
        let encoded = try WireJSON.encode(plan)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(encoded)) as? [String: Any])
        #expect(Set(object.keys) == ["availableBytes", "reserveBytes", "remainingBytes", "fits", "next"])
        #expect(int64(object["availableBytes"]) == Self.reserve16 + 2 * Self.mib)
        #expect(int64(object["reserveBytes"]) == Self.reserve16)
        #expect(int64(object["remainingBytes"]) == 9 * Self.mib / 2)
        #expect(object["fits"] as? Bool == false)
        let next = try #require(object["next"] as? [[String: Any]])
        #expect(next.count == 2)
        for step in next { #expect(Set(step.keys) == ["path", "offset", "length"]) }
        #expect(next[0]["path"] as? String == "a.bin")
        #expect(int64(next[0]["offset"]) == Self.mib)
        #expect(int64(next[1]["length"]) == Self.mib / 2)
        // `fits` is a JSON boolean, not a string or number.
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"fits\": false"))
        #expect(try WireJSON.decode(ChunkPlan.self, from: encoded) == plan)
    }

    @Test func encodedEscapesPaths() throws {
        let manifest = Self.manifest([("dir/\"quoted\" ñ.bin", 10)], chunkSize: 4096)
        let plan = try ChunkPlan.make(manifest: manifest, available: 1 << 30, have: 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(try WireJSON.encode(plan))) as? [String: Any])
        let next = try #require(object["next"] as? [[String: Any]])
        #expect(next.first?["path"] as? String == "dir/\"quoted\" ñ.bin")
    }
}
