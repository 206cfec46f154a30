import DepotCore
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
