import DepotCore
import DepotWire
import Foundation

/// `catalog/lists.json`: for each product list, the SHA-256 of its content and when that content last changed.
///
/// This is what keeps `Last-Modified` stable across restarts and identical on every replica: a list whose
/// content still matches the record keeps the recorded time; a list whose content changed (a hand edit)
/// takes the modification time of `products.json`. `depot publish` and `depot retire` rewrite the record.
struct ListValidatorRecord: Equatable {
    struct Entry: Equatable {
        var sha256: String
        var lastModified: Int64
    }

    static let fileName = "lists.json"
    var entries: [String: Entry] = [:]

    static func load(from url: URL) -> ListValidatorRecord {
        guard let data = try? Data(contentsOf: url),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return ListValidatorRecord() }
        var record = ListValidatorRecord()
        for (name, value) in object {
            guard let entry = value as? [String: Any], let hash = entry["sha256"] as? String,
                  let time = entry["lastModified"] as? String, let seconds = Timestamp.parseRFC3339(time) else { continue }
            record.entries[name] = Entry(sha256: hash, lastModified: seconds)
        }
        return record
    }

    /// What is wrong with the record at `path` (none when it is missing: a hand-made catalog may have none).
    /// A damaged record is not fatal, since the lists then take the catalog file's time, but it is reported
    /// because those validators are then no longer the recorded ones (`depot check`, and the server's log).
    static func problems(at path: String) -> [CatalogProblem] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        func problem(_ field: String, _ message: String) -> CatalogProblem { CatalogProblem(file: path, field: field, message: message) }
        guard let data = FileManager.default.contents(atPath: path) else { return [problem("", "cannot be read")] }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            return [problem("", "is not a JSON object (the list validator record that depot publish writes)")]
        }
        var problems: [CatalogProblem] = []
        for name in object.keys.sorted() {
            guard name == "products_v1.json" || name == "products_v2.json" else {
                problems.append(problem(name, "is not a product list (products_v1.json or products_v2.json)"))
                continue
            }
            guard let entry = object[name] as? [String: Any] else {
                problems.append(problem(name, "must be an object with sha256 and lastModified"))
                continue
            }
            let hash = entry["sha256"] as? String
            if hash == nil || hash!.utf8.count != 64 || !hash!.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) {
                problems.append(problem(name + ".sha256", "must be 64 lowercase hex digits"))
            }
            if (entry["lastModified"] as? String).flatMap(Timestamp.parseRFC3339) == nil {
                problems.append(problem(name + ".lastModified", "must be an RFC 3339 time such as 2026-11-30T02:33:58Z"))
            }
        }
        return problems
    }

    func encoded() -> [UInt8] {
        var out = "{"
        for (i, name) in entries.keys.sorted().enumerated() {
            let entry = entries[name]!
            out += i == 0 ? "\n" : ",\n"
            out += "  \(JSONText.string(name)): {\"sha256\": \(JSONText.string(entry.sha256)), \"lastModified\": \(JSONText.string(Timestamp.rfc3339(entry.lastModified)))}"
        }
        out += "\n}\n"
        return Array(out.utf8)
    }

    /// The time the content last changed: the recorded one when the hash still matches, else `fallback`, but
    /// never at or before a recorded time whose content has since been replaced (the new bytes came later, and a
    /// client holding the recorded `Last-Modified` must not be told "not modified").
    func lastModified(of name: String, contentHash: String, fallback: Int64) -> Int64 {
        guard let entry = entries[name] else { return fallback }
        if entry.sha256 == contentHash { return entry.lastModified }
        return max(fallback, entry.lastModified + 1)
    }
}
