import FuzzSupport
import HTTP

/// Range, conditional and validator parsers: byte ranges decided for a size, preconditions evaluated, entity tags
/// and HTTP dates read back from what they print, multipart bodies read back from what they frame.
func fuzzRangesAndConditions(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(start, count)
    let size = Int64(input.number()) * (Int64(input.byte()) + 1)
    let lines = input.lines
    func line(_ i: Int) -> [String] { i < lines.count && !lines[i].isEmpty ? [lines[i]] : [] }

    switch ByteRangeSet.decide(line(0), size: size) {
    case .full, .unsatisfiable:
        break
    case .partial(let ranges):
        require(!ranges.isEmpty && ranges.count <= ByteRangeSet.maximumRangeCount, "\(ranges.count) ranges")
        var total: Int64 = 0
        for range in ranges {
            require(range.offset >= 0 && range.length > 0 && range.offset + range.length <= size, "range \(range) of \(size)")
            total += range.length
        }
        require(total <= size, "ranges add up to \(total) of \(size)")
        if ranges.count > 1, size <= 1 << 16 {
            let representation = [UInt8](repeating: 0x61, count: Int(size))
            let multipart = MultipartByteRanges(ranges: ranges, totalSize: size, contentType: "application/octet-stream",
                                                boundary: "fuzz-boundary")
            let body = multipart.body(of: representation)
            require(Int64(body.count) == multipart.contentLength, "multipart length")
            let parts = try? MultipartByteRanges.parse(body: body, boundary: "fuzz-boundary")
            require(parts?.count == ranges.count, "multipart parts read back")
        }
    }

    let etag = lines.count > 6 ? EntityTag(parsing: lines[6]) : nil
    if let etag { require(EntityTag(parsing: etag.headerValue) == etag, "entity tag round trip \(etag.headerValue)") }
    let lastModified = lines.count > 7 ? HTTPDate.parse(lines[7]) : nil
    if let lastModified, lastModified >= 0, lastModified < 253_402_300_800 {
        require(HTTPDate.parse(HTTPDate.format(lastModified)) == lastModified, "date round trip \(lastModified)")
    }
    let preconditions = Preconditions(ifMatch: line(1), ifNoneMatch: line(2), ifModifiedSince: line(3), ifUnmodifiedSince: line(4),
                                      ifRange: line(5))
    for method in [true, false] {
        _ = preconditions.evaluate(isGetOrHead: method, etag: etag, lastModified: lastModified)
    }
    _ = preconditions.ifRangeAllowsPartial(etag: etag, lastModified: lastModified)
    return 0
}

runFuzzer(fuzzRangesAndConditions)
