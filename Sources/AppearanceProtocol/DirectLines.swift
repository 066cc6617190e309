import AppearanceCore

// The lines on a change's path written straight to bytes (`JSONOut`): the bytes of their `JSON` trees.

extension AppearanceState {
    /// `members`, written straight to `o` (the object's braces are the caller's).
    func writeMembers(to o: inout JSONOut) {
        o.key("mode"); o.string(mode.rawValue)
        o.key("darkMode"); o.bool(darkMode)
        o.key("system"); o.string(system.rawValue)
        o.key("override"); o.string(override.rawValue)
        o.key("source"); o.string(source.rawValue)
        o.key("seq"); o.uint(seq)
        o.key("instance"); o.string(instance)
        o.key("traits"); traits.write(to: &o)
        o.key("temporary")
        if let temporary { o.json(temporary.json) } else { o.null() }
        if let app {
            o.key("app"); o.string(app)
            o.key("globalMode"); o.string((globalMode ?? mode).rawValue)
            o.key("globalSource"); o.string((globalSource ?? source).rawValue)
        }
        if let configProblem { o.key("configProblem"); o.string(configProblem) }
    }
}

extension Traits {
    /// `json`, written straight to `o`.
    func write(to o: inout JSONOut) {
        o.open()
        o.key("contrast")
        if let contrast { o.string(contrast.rawValue) } else { o.null() }
        o.key("reducedMotion")
        if let reducedMotion { o.bool(reducedMotion) } else { o.null() }
        o.key("accentColor")
        if let accentColor { o.string(accentColor.opaqueHex) } else { o.null() }
        o.close()
    }
}

extension Outgoing {
    /// Written straight to bytes (each change sends it): the bytes of
    /// `frame(.object([("jsonrpc", "2.0"), ("method", "changed"), ("params", n.json)]))`.
    public static func changed(_ n: Notification) -> [UInt8] {
        var o = JSONOut(capacity: n.palette == nil ? 320 : 1024)
        o.open()
        o.key("jsonrpc"); o.string("2.0")
        o.key("method"); o.string("changed")
        o.key("params")
        o.open()
        n.state.writeMembers(to: &o)
        o.key("previous"); o.string(n.previous.rawValue)
        if let palette = n.palette { o.key("palette"); o.json(palette.json) }
        o.close()
        o.close()
        o.newline()
        return o.bytes
    }

    /// A state reply (`get`), written straight to bytes: the bytes of `result(id: id, state.json)`.
    public static func state(id: JSON, _ state: AppearanceState) -> [UInt8] {
        var o = JSONOut(capacity: 320)
        o.open()
        o.key("jsonrpc"); o.string("2.0")
        o.key("id"); o.json(id)
        o.key("result")
        o.open()
        state.writeMembers(to: &o)
        o.close()
        o.close()
        o.newline()
        return o.bytes
    }
}

extension LogEntry {
    /// The change log's line (each change writes one), written straight to bytes: the bytes of `json`, with
    /// `"replaces": true` after its members when `replacing`, and a newline.
    public func line(replacing: Bool) -> [UInt8] {
        var o = JSONOut(capacity: 160 + cause.utf8.count)
        o.open()
        o.key("time"); o.uint(UInt64(max(0, time)))
        o.key("from")
        if let from { o.string(from.rawValue) } else { o.null() }
        o.key("to"); o.string(to.rawValue)
        o.key("source")
        if let source { o.string(source.rawValue) } else { o.null() }
        if let app { o.key("app"); o.string(app) }
        o.key("cause"); o.string(cause)
        if changes > 1 { o.key("changes"); o.uint(UInt64(changes)) }
        if replacing { o.key("replaces"); o.bool(true) }
        o.close()
        o.newline()
        return o.bytes
    }
}
