/// What a connection still has to send, in order: the bytes of heads and in-memory bodies — of every pipelined
/// response queued so far, in one contiguous buffer so that they leave in one write — and the file regions
/// between them, which leave with `sendfile`.
struct OutboundQueue {
    /// A file region to send once the buffer has been written up to `after`.
    private struct FileMark {
        var after: Int
        var region: FileRegion
        var sent: Int64 = 0
    }

    enum FlushOutcome: Equatable {
        /// Everything queued has been taken by the output.
        case drained
        /// The output is full; wait until it is writable.
        case blocked
        /// The output failed (the peer is gone, or a file shrank under us).
        case failed
    }

    private var bytes: [UInt8] = []
    private var bytesSent = 0
    private var files: [FileMark] = []
    private var fileIndex = 0
    /// Bytes queued since the connection opened, files included (positions for exchange completion).
    private(set) var queuedTotal: Int64 = 0
    /// Bytes sent since the connection opened.
    private(set) var sentTotal: Int64 = 0
    /// The last flush stopped on a full output.
    private(set) var isBlocked = false

    /// Nothing left to send.
    var isEmpty: Bool { sentTotal == queuedTotal }
    /// In-memory bytes waiting to be sent.
    var pendingBytes: Int { bytes.count - bytesSent }

    /// The output may take more: the next flush tries again.
    mutating func outputBecameWritable() { isBlocked = false }

    mutating func append(_ more: [UInt8]) {
        bytes.append(contentsOf: more)
        queuedTotal += Int64(more.count)
    }

    mutating func append(_ more: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: more)
        queuedTotal += Int64(more.count)
    }

    /// Appends in place (a response head is encoded straight into the buffer).
    mutating func appendBytes(_ encode: (inout [UInt8]) -> Void) {
        let before = bytes.count
        encode(&bytes)
        queuedTotal += Int64(bytes.count - before)
    }

    mutating func append(_ region: FileRegion) {
        // An empty region has nothing to send; queueing it would hold the head back (MSG_MORE) for nothing.
        guard region.length > 0 else { return }
        files.append(FileMark(after: bytes.count, region: region))
        queuedTotal += region.length
    }

    mutating func append(_ body: ResponseBody) {
        switch body {
        case .empty: break
        case .bytes(let b): append(b)
        case .file(let region): append(region)
        case .segments(let segments):
            for segment in segments {
                switch segment {
                case .bytes(let b): append(b)
                case .file(let region): append(region)
                }
            }
        }
    }

    /// Writes as much as the output takes.
    mutating func flush(to output: inout some ConnectionOutput) -> FlushOutcome {
        while true {
            let bytesEnd = fileIndex < files.count ? files[fileIndex].after : bytes.count
            if bytesSent < bytesEnd {
                let more = fileIndex < files.count
                let wanted = bytesEnd - bytesSent
                let n = bytes.withUnsafeBytes { all in
                    output.send(UnsafeRawBufferPointer(rebasing: all[bytesSent..<bytesEnd]), more: more)
                }
                if n < 0 { return .failed }
                bytesSent += n
                sentTotal += Int64(n)
                if n < wanted { isBlocked = true; return .blocked }
                continue
            }
            if fileIndex < files.count {
                let mark = files[fileIndex]
                let remaining = mark.region.length - mark.sent
                let wanted = Int(min(remaining, 1 << 30))
                let n = output.sendFile(mark.region.file, offset: mark.region.offset + mark.sent, count: wanted)
                if n < 0 { return .failed }
                files[fileIndex].sent += Int64(n)
                sentTotal += Int64(n)
                if Int64(n) == remaining { fileIndex += 1; continue }
                if n < wanted { isBlocked = true; return .blocked }
                continue
            }
            bytes.removeAll(keepingCapacity: true)
            bytesSent = 0
            if !files.isEmpty { files.removeAll() }
            fileIndex = 0
            return .drained
        }
    }

    /// Drops everything (the connection is closing).
    mutating func discard() {
        bytes = []
        bytesSent = 0
        files = []
        fileIndex = 0
        sentTotal = queuedTotal
    }

    // MARK: - A buffer borrowed from the loop

    /// Uses `scratch` (the loop's buffer) as this queue's buffer when it has none, so an idle connection holds
    /// no output buffer of its own.
    mutating func borrow(_ scratch: inout [UInt8]) {
        guard isEmpty, bytes.capacity == 0, scratch.capacity > 0 else { return }
        swap(&bytes, &scratch)
    }

    /// Hands the buffer back to the loop once everything has been sent (a very large one is dropped instead).
    mutating func giveBack(_ scratch: inout [UInt8]) {
        guard isEmpty, bytes.capacity > 0, scratch.capacity == 0 else { return }
        if bytes.capacity <= 256 * 1024 { swap(&bytes, &scratch) } else { bytes = [] }
    }
}
