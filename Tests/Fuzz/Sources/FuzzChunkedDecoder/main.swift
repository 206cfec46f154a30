import FuzzSupport
import HTTP

/// The chunked decoder: the same body, decoded whole and in pieces of fuzzer-chosen sizes, gives the same
/// bytes and the same verdict; it never emits more than its limit.
func fuzzChunkedDecoder(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    var input = FuzzInput(start, count)
    let limit = Int64(input.number())
    let piece = 1 + Int(input.byte() % 31)
    let wire = input.rest
    let whole = decode(wire, limit: limit, pieceSize: wire.count + 1)
    let pieces = decode(wire, limit: limit, pieceSize: piece)
    require(whole.verdict == pieces.verdict, "verdicts \(whole.verdict) vs \(pieces.verdict)")
    require(whole.body == pieces.body, "bodies differ")
    require(Int64(whole.body.count) <= limit, "emitted \(whole.body.count) over the limit \(limit)")
    return 0
}

private func decode(_ wire: [UInt8], limit: Int64, pieceSize: Int) -> (body: [UInt8], verdict: String) {
    var decoder = ChunkedDecoder(maxBodyBytes: limit, maxSideBytes: 256)
    var body: [UInt8] = []
    var offset = 0
    while offset < wire.count {
        let end = min(wire.count, offset + pieceSize)
        do {
            let used = try wire[offset..<end].withUnsafeBytes { piece in
                try decoder.decode(piece) { body.append(contentsOf: $0) }
            }
            require(used <= end - offset, "used more than given")
            offset += used
            if decoder.isDone { return (body, "done at \(offset)") }
            if used < end - offset { return (body, "stopped") }
        } catch {
            return (body, "failed \(error)")
        }
    }
    return (body, "incomplete")
}

runFuzzer(fuzzChunkedDecoder)
