/// The character rules for identifiers that end up in file names and URLs.
public enum Identifiers {
    /// A product ID: reverse-DNS characters `[A-Za-z0-9._-]`, 1...255 (spec §2.1).
    public static func isValidProductID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...255).contains(bytes.count) else { return false }
        return bytes.allSatisfy(isIDByte)
    }

    /// A pack ID: `[A-Za-z0-9._-]`, 1...128, not starting with a dot (it names a directory).
    public static func isValidPackID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...128).contains(bytes.count), bytes.first != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy(isIDByte)
    }

    /// A pack version: a positive decimal integer without leading zeros.
    public static func parseVersion(_ text: some StringProtocol) -> Int? {
        guard let first = text.utf8.first, first != UInt8(ascii: "0"), text.utf8.count <= 9,
              text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// A relative file path inside a pack: non-empty segments, none `.` or `..`, at most 255 bytes each and
    /// 1,024 in all, without backslashes, NUL or other control characters.
    public static func isSafeRelativePath(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 1024, !path.hasPrefix("/") else { return false }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.isEmpty || segment == "." || segment == ".." || segment.utf8.count > 255 { return false }
            if segment.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) { return false }
        }
        return true
    }

    static func isIDByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
            || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }
}
