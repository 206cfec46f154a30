public import ArgumentParsing

/// How log lines look (`--log-format`, operations.md §2): `text` for people, `json` (one object per line) for
/// log collectors.
public enum LogFormat: String, Sendable, CaseIterable, EnumeratedOption {
    case text
    case json
}
