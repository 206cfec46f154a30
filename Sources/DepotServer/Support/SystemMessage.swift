import Glibc

/// The text of an errno value.
func systemMessage(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(validatingCString: text) ?? "errno \(code)"
}
