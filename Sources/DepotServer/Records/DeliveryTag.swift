import Server

/// What a pack file answer carries, for the delivery record: whose token it was, which file, and where the
/// file's bytes sit in the body (a `multipart/byteranges` body interleaves part heads with file ranges). Given
/// the body bytes actually written (`ExchangeRecord.bytesSent`), `pieces(written:)` says which file bytes went
/// out.
struct DeliveryTag: Sendable {
    /// A run of file bytes in the body: from `bodyOffset`, `length` bytes of the file starting at `fileOffset`.
    struct Run: Sendable, Equatable {
        var bodyOffset: Int64
        var fileOffset: Int64
        var length: Int64
    }

    let purchase: String
    let pack: String
    let version: Int
    let path: String
    let runs: [Run]

    init(purchase: String, pack: String, version: Int, path: String, body: ResponseBody) {
        self.purchase = purchase
        self.pack = pack
        self.version = version
        self.path = path
        var runs: [Run] = []
        switch body {
        case .file(let region):
            runs.append(Run(bodyOffset: 0, fileOffset: region.offset, length: region.length))
        case .segments(let segments):
            var position: Int64 = 0
            for segment in segments {
                switch segment {
                case .file(let region):
                    runs.append(Run(bodyOffset: position, fileOffset: region.offset, length: region.length))
                    position += region.length
                case .bytes(let bytes):
                    position += Int64(bytes.count)
                }
            }
        case .empty, .bytes:
            break
        }
        self.runs = runs
    }

    /// The file ranges among the first `written` body bytes.
    func ranges(written: Int64) -> [Range<Int64>] {
        runs.compactMap { run in
            let sent = min(run.length, written - run.bodyOffset)
            return sent > 0 ? run.fileOffset..<(run.fileOffset + sent) : nil
        }
    }
}
