/// A request method (RFC 9110 §9). Methods are case-sensitive tokens.
public enum HTTPMethod: Hashable, Sendable, CustomStringConvertible {
    case get, head, post, put, delete, options, patch, trace, connect
    case other(String)

    /// Recognises the standard methods from their exact (upper-case) bytes.
    init(bytes: UnsafeRawBufferPointer) {
        switch bytes.count {
        case 3:
            if Self.equals(bytes, "GET") { self = .get; return }
            if Self.equals(bytes, "PUT") { self = .put; return }
        case 4:
            if Self.equals(bytes, "HEAD") { self = .head; return }
            if Self.equals(bytes, "POST") { self = .post; return }
        case 5:
            if Self.equals(bytes, "PATCH") { self = .patch; return }
            if Self.equals(bytes, "TRACE") { self = .trace; return }
        case 6:
            if Self.equals(bytes, "DELETE") { self = .delete; return }
        case 7:
            if Self.equals(bytes, "OPTIONS") { self = .options; return }
            if Self.equals(bytes, "CONNECT") { self = .connect; return }
        default: break
        }
        self = .other(String(decoding: bytes, as: UTF8.self))
    }

    public init(_ name: String) {
        var name = name
        self = name.withUTF8 { HTTPMethod(bytes: UnsafeRawBufferPointer($0)) }
    }

    private static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0
    }

    public var description: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .post: "POST"
        case .put: "PUT"
        case .delete: "DELETE"
        case .options: "OPTIONS"
        case .patch: "PATCH"
        case .trace: "TRACE"
        case .connect: "CONNECT"
        case .other(let name): name
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
