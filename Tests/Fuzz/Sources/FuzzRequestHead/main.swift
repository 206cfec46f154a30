import FuzzSupport
import HTTP

/// The request-head parser: whole, then grown a few bytes at a time as a connection feeds it (the verdict must
/// be the same); a head found is indexed, copied out, and its target split and decoded.
func fuzzRequestHead(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(start, count)
    let step = 1 + Int(input.byte() % 97)
    let bytes = input.rest
    var limits = HTTPLimits()
    limits.maxRequestLineBytes = 256
    limits.maxHeaderBytes = 1024
    limits.maxHeaderCount = 16
    var parser = RequestHeadParser(limits: limits)
    let whole = bytes.withUnsafeBytes { buffer -> String in
        switch parser.scan(buffer) {
        case .incomplete: return "incomplete"
        case .failure(let error): return "failure \(error.status)"
        case .head(let index):
            require(index.consumed > 0 && index.consumed <= buffer.count, "consumed \(index.consumed) of \(buffer.count)")
            let raw = RawRequestHead(buffer: buffer, index: index)
            let head = RequestHead(raw)
            require(head.fields.count == index.fieldCount, "fields \(head.fields.count) vs \(index.fieldCount)")
            require(raw.pathIs("/") == (RequestTarget(head.target).path == "/"), "pathIs disagrees with \(head.target)")
            for field in IndexedField.allCases {
                var seen = 0
                raw.forEachValue(field) { _ in seen += 1 }
                require(seen == raw.occurrences(field), "\(field) occurrences")
            }
            let target = RequestTarget(head.target)
            _ = try? target.pathSegments()
            _ = target.queryItems()
            return "head \(index.consumed)"
        }
    }
    parser.reset()
    var grown = "incomplete"
    var arrived = 0
    while arrived < bytes.count {
        arrived = min(bytes.count, arrived + step)
        let outcome = bytes.withUnsafeBytes { buffer -> String? in
            switch parser.scan(UnsafeRawBufferPointer(rebasing: buffer[0..<arrived])) {
            case .incomplete: return nil
            case .failure(let error): return "failure \(error.status)"
            case .head(let index): return "head \(index.consumed)"
            }
        }
        if let outcome { grown = outcome; break }
    }
    // A head that fits in fewer bytes is found as soon as they arrive, so only its verdict must agree; a refusal
    // may come earlier when growing (a line over the limit is refused before its end arrives).
    if whole.hasPrefix("head") || grown.hasPrefix("head") { require(whole == grown, "whole: \(whole), grown: \(grown)") }
    return 0
}

runFuzzer(fuzzRequestHead)
