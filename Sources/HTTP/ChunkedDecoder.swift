/// Decodes a `Transfer-Encoding: chunked` body incrementally (RFC 9112 §7.1), without I/O.
///
/// Chunk extensions are skipped (bounded), trailer fields are read and discarded (bounded).
public struct ChunkedDecoder: Sendable {
    public enum Failure: Error, Equatable, Sendable {
        case malformed
        case tooLarge
    }

    private enum State: Sendable, Equatable {
        case size(digits: Int)
        case extensionBytes
        case sizeLF
        case data
        case dataCR
        case dataLF
        case trailerLineStart
        case trailerLine
        case trailerLF(empty: Bool)
        case done
    }

    private var state = State.size(digits: 0)
    private var chunkRemaining: Int64 = 0
    private var total: Int64 = 0
    private var sideBytes = 0
    /// Largest decoded body accepted.
    public let maxBodyBytes: Int64
    /// Bytes of chunk extensions and trailers accepted in all.
    public let maxSideBytes: Int

    public init(maxBodyBytes: Int64, maxSideBytes: Int = 8 * 1024) {
        self.maxBodyBytes = maxBodyBytes
        self.maxSideBytes = maxSideBytes
    }

    public var isDone: Bool { state == .done }
    /// Decoded bytes so far (`total` already counts the whole of the chunk in progress).
    public var decodedBytes: Int64 { state == .data ? total - chunkRemaining : total }

    /// Consumes bytes from `input`, calling `emit` with each run of body data.
    /// Returns how many input bytes were consumed; stops right after the final CRLF.
    public mutating func decode(_ input: UnsafeRawBufferPointer,
                                emit: (UnsafeRawBufferPointer) -> Void) throws(Failure) -> Int {
        var i = 0
        let n = input.count
        while i < n {
            let c = input[i]
            switch state {
            case .size(let digits):
                if let v = Self.hexValue(c) {
                    guard digits < 15 else { throw .malformed }
                    chunkRemaining = chunkRemaining * 16 + Int64(v)
                    state = .size(digits: digits + 1)
                    i += 1
                } else {
                    guard digits > 0 else { throw .malformed }
                    if c == 0x0D { state = .sizeLF; i += 1 }
                    else if c == 0x0A { i += 1; try enterChunk() }
                    else if c == 0x3B || c == 0x20 || c == 0x09 { state = .extensionBytes; i += 1 }
                    else { throw .malformed }
                }
            case .extensionBytes:
                if c == 0x0D { state = .sizeLF }
                else if c == 0x0A { i += 1; try enterChunk(); continue }
                else if c < 0x20 && c != 0x09 { throw .malformed }
                else { sideBytes += 1; if sideBytes > maxSideBytes { throw .tooLarge } }
                i += 1
            case .sizeLF:
                guard c == 0x0A else { throw .malformed }
                i += 1
                try enterChunk()
            case .data:
                let take = Int(min(Int64(n - i), chunkRemaining))
                emit(UnsafeRawBufferPointer(rebasing: input[i..<(i + take)]))
                i += take
                chunkRemaining -= Int64(take)
                if chunkRemaining == 0 { state = .dataCR }
            case .dataCR:
                if c == 0x0D { state = .dataLF; i += 1 }
                else if c == 0x0A { state = .size(digits: 0); i += 1 }
                else { throw .malformed }
            case .dataLF:
                guard c == 0x0A else { throw .malformed }
                state = .size(digits: 0)
                i += 1
            case .trailerLineStart:
                if c == 0x0D { state = .trailerLF(empty: true) }
                else if c == 0x0A { state = .done; return i + 1 }
                else { state = .trailerLine; sideBytes += 1 }
                i += 1
            case .trailerLine:
                if c == 0x0D { state = .trailerLF(empty: false) }
                else if c == 0x0A { state = .trailerLineStart }
                else { sideBytes += 1; if sideBytes > maxSideBytes { throw .tooLarge } }
                i += 1
            case .trailerLF(let empty):
                guard c == 0x0A else { throw .malformed }
                i += 1
                if empty { state = .done; return i }
                state = .trailerLineStart
            case .done:
                return i
            }
        }
        return i
    }

    private mutating func enterChunk() throws(Failure) {
        if chunkRemaining == 0 {
            state = .trailerLineStart
            return
        }
        total += chunkRemaining
        if total > maxBodyBytes { throw .tooLarge }
        state = .data
    }

    @inline(__always) private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
