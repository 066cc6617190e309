/// The writes appearanced made to the desktop's own setting that it has not yet read back, oldest first: a reading
/// that matches one is its echo, any other the user's flip (docs/decisions.md, "Echo rule: by the write queue").
public struct DesktopWrites: Equatable, Sendable {
    struct Write: Equatable, Sendable {
        var id: Int
        var scheme: SystemScheme
        var finished = false
    }

    private(set) var inFlight: [Write] = []
    private var nextID = 0
    /// The desktop's own value from before appearanced first wrote to it, while it shows appearanced's (nil: its own).
    public var original: SystemScheme?
    /// How the desktop reports appearanced's last write (a reading equal to it is still appearanced's value).
    public var lastWritten: SystemScheme?
    /// The desktop's last reading (nil: none yet through `Decide.desktopReading`).
    public var shown: SystemScheme?

    public init(original: SystemScheme? = nil, lastWritten: SystemScheme? = nil) {
        (self.original, self.lastWritten) = (original, lastWritten)
    }

    /// A write is starting: the desktop will report `scheme` once it lands. Returns its number, for `finished`.
    public mutating func wrote(_ scheme: SystemScheme) -> Int {
        defer { nextID += 1 }
        inFlight.append(Write(id: nextID, scheme: scheme))
        return nextID
    }

    /// The write has finished: a failed one will have no echo.
    public mutating func finished(_ id: Int, ok: Bool) {
        guard let i = inFlight.firstIndex(where: { $0.id == id }) else { return }  // its echo came first
        if ok { inFlight[i].finished = true } else { inFlight.remove(at: i) }
    }

    /// A reading of the desktop's value: true when it is the echo of a write in flight.
    public mutating func reading(_ scheme: SystemScheme) -> Bool {
        if let i = inFlight.firstIndex(where: { $0.scheme == scheme }) {
            inFlight.removeSubrange(...i)
            return true
        }
        inFlight.removeAll { $0.finished }
        return false
    }

    /// What the desktop will show once every write in flight has landed (nil: none is in flight).
    public var expected: SystemScheme? { inFlight.last?.scheme }
}
