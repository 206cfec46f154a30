/// Reads a fuzzer's input as a sequence of choices: numbers that steer a target (split points, sizes) taken
/// from the front, the rest as data.
public struct FuzzInput {
    public let bytes: [UInt8]
    private var position = 0

    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    }

    /// The next byte (0 once the input is used up).
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next two bytes as a number.
    public mutating func number() -> Int { Int(byte()) << 8 | Int(byte()) }

    /// Everything not read yet.
    public var rest: [UInt8] { position < bytes.count ? Array(bytes[position...]) : [] }

    /// The rest split into lines (LF), each as a String (invalid UTF-8 repaired).
    public var lines: [String] {
        rest.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Stops the fuzzer with a finding: an invariant of the code under test does not hold.
public func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}
