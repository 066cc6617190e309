/// Splits a byte stream into lines of at most `maxLineLength` bytes (newline excluded), skipping blank lines, in O(n).
public struct LineFramer: Sendable {
    public struct LineTooLong: Error, Equatable, Sendable {}

    public let limit: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var scanned = 0

    public init(limit: Int = maxLineLength) { self.limit = limit }

    /// Bytes received but not yet part of a complete line.
    public var pendingCount: Int { buffer.count - start }

    public mutating func append(_ bytes: [UInt8]) { append(bytes[...]) }

    /// Bytes just read into a buffer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Concrete, not generic: see JSON.parse.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Drops the lines already taken before more bytes come in.
    private mutating func compact() {
        if start > 0, start == buffer.count {
            reset(keepingCapacity: true)
        } else if start > 4096, start * 2 > buffer.count {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
    }

    private mutating func reset(keepingCapacity: Bool) {
        buffer.removeAll(keepingCapacity: keepingCapacity)
        (start, scanned) = (0, 0)
    }

    /// At end of stream: the bytes of an unterminated last line (nil if none, or only blanks), and the framer is emptied.
    public mutating func remainder() -> ArraySlice<UInt8>? {
        let rest = buffer[start...]
        reset(keepingCapacity: false)
        if rest.count > limit || rest.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
        return rest
    }

    /// The next complete line, nil when more bytes are needed; throws once the pending line exceeds the limit.
    public mutating func next() throws(LineTooLong) -> ArraySlice<UInt8>? {
        while true {
            guard let nl = buffer[scanned...].firstIndex(of: 0x0A) else {
                if start == buffer.count {
                    // Every line taken: let the bytes go (a subscriber would keep its request otherwise).
                    reset(keepingCapacity: false)
                    return nil
                }
                scanned = buffer.count
                if buffer.count - start > limit { throw LineTooLong() }
                return nil
            }
            let line = buffer[start..<nl]
            start = nl + 1
            scanned = start
            if line.count > limit { throw LineTooLong() }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            return line
        }
    }
}
