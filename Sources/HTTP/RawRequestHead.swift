#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A checked request head read straight from the bytes it was parsed from: method, target and the indexed
/// fields, compared as bytes, without a `String` made. It is valid only while those bytes are (during the call
/// it is passed to); `RequestHead(_:)` copies it out.
public struct RawRequestHead {
    /// The buffer the head was parsed from (the head starts at its first byte).
    public let buffer: UnsafeRawBufferPointer
    public let index: RequestHeadIndex

    public init(buffer: UnsafeRawBufferPointer, index: RequestHeadIndex) {
        self.buffer = buffer
        self.index = index
    }

    private var base: UnsafePointer<UInt8> { buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) }

    public var method: HTTPMethod { index.method }
    public var isGetOrHead: Bool { index.method == .get || index.method == .head }

    /// The origin-form target's bytes (without the "/" an absolute-form without a path stands for).
    public var targetBytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + index.targetStart, count: index.targetEnd - index.targetStart)
    }

    /// The target was an absolute-form without a path: the origin-form is "/" followed by `targetBytes`.
    public var targetHasImpliedSlash: Bool { index.targetNeedsSlash }

    /// Whether the path (before any `?`) is exactly `literal`.
    public func pathIs(_ literal: StaticString) -> Bool {
        pathIs(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Whether the path (before any `?`) is exactly these bytes.
    public func pathIs(_ path: [UInt8]) -> Bool {
        path.withUnsafeBufferPointer { pathIs($0) }
    }

    private func pathIs(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        let target = targetBytes
        let n = path.count
        if index.targetNeedsSlash {
            // The path is "/" and the rest, if any, a query.
            return n == 1 && path[0] == 0x2F
        }
        guard n > 0, target.count >= n, target.count == n || target[n] == 0x3F else { return false }
        return memcmp(target.baseAddress!, path.baseAddress!, n) == 0
    }

    /// The first value of `field` (without surrounding whitespace), or nil when the request has none.
    public func value(_ field: IndexedField) -> UnsafeBufferPointer<UInt8>? {
        guard let range = index.firstValue(of: field) else { return nil }
        return UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    /// How many field lines carry `field`.
    public func occurrences(_ field: IndexedField) -> Int { index.occurrences(of: field) }

    /// Calls `body` with every value of `field`, in order.
    public func forEachValue(_ field: IndexedField, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let base = self.base
        index.forEachValue(of: field, in: base) { body(UnsafeBufferPointer(start: base + $0.lowerBound, count: $0.count)) }
    }

    /// The target as a `String` (with the "/" an absolute-form without a path stands for).
    public func makeTarget() -> String {
        let target = targetBytes
        if index.targetNeedsSlash {
            return String(unsafeUninitializedCapacity: target.count + 1) { out in
                out[0] = 0x2F
                for k in 0..<target.count { out[k + 1] = target[k] }
                return target.count + 1
            }
        }
        return String(decoding: target, as: UTF8.self)
    }
}

extension RequestHead {
    /// Copies a raw head out of its buffer: the target and every field become `String`s.
    public init(_ raw: RawRequestHead) {
        let index = raw.index
        var fields = HTTPFields()
        fields.storage.reserveCapacity(index.fieldCount)
        if let base = raw.buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) {
            RequestHeadIndex.forEachLine(base: base, fields: index.fieldsStart..<index.fieldsEnd) { name, value in
                let lowered = String(unsafeUninitializedCapacity: name.count) { out in
                    for k in 0..<name.count {
                        let c = base[name.lowerBound + k]
                        out[k] = (c >= 0x41 && c <= 0x5A) ? c + 0x20 : c
                    }
                    return name.count
                }
                fields.appendLowercased(lowered, String(decoding: UnsafeBufferPointer(start: base + value.lowerBound, count: value.count),
                                                        as: UTF8.self))
            }
        }
        self.init(method: index.method, target: raw.makeTarget(), minorVersion: index.minorVersion, fields: fields,
                  framing: index.framing, keepAlive: index.keepAlive, expectsContinue: index.expectsContinue)
    }
}
