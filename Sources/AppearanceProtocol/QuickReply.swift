import AppearanceCore

// appearancectl's fast path (docs/decisions.md): constant request lines and a recogniser of the reply's
// bytes, beside the encoder they mirror; QuickReplyTests holds them to it.

/// The fast path's request lines, newline included: each is `Request(id: .int(1), call: …).line`.
package enum QuickRequest {
    package static let get: StaticString = #"{"jsonrpc":"2.0","id":1,"method":"get"}\#n"#
    package static let toggle: StaticString = #"{"jsonrpc":"2.0","id":1,"method":"toggle"}\#n"#

    package static func set(_ o: Override) -> StaticString {
        switch o {
        case .light: #"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"light"}}\#n"#
        case .dark: #"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"dark"}}\#n"#
        case .system: #"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"system"}}\#n"#
        }
    }
}

extension Request {
    /// The request of one of QuickRequest's lines (without its newline), known by its bytes: what `decode` makes
    /// of it. Anything else is nil and is parsed. The daemon's side of appearancectl's fast path.
    package static func quick(_ line: ArraySlice<UInt8>) -> Request? {
        let text: StaticString, call: Call
        switch line.count + 1 {  // the five lines' lengths differ
        case QuickRequest.get.utf8CodeUnitCount: (text, call) = (QuickRequest.get, .get)
        case QuickRequest.toggle.utf8CodeUnitCount: (text, call) = (QuickRequest.toggle, .toggle)
        case QuickRequest.set(.light).utf8CodeUnitCount: (text, call) = (QuickRequest.set(.light), .set(.light))
        case QuickRequest.set(.dark).utf8CodeUnitCount: (text, call) = (QuickRequest.set(.dark), .set(.dark))
        case QuickRequest.set(.system).utf8CodeUnitCount: (text, call) = (QuickRequest.set(.system), .set(.system))
        default: return nil
        }
        let same = line.withUnsafeBufferPointer { l in l.indices.allSatisfy { l[$0] == text.utf8Start[$0] } }
        return same ? Request(id: .int(1), call: call) : nil
    }
}

/// Recognises the reply to request 1 of `get`, `set` or `toggle` (without an app) by its bytes.
package enum QuickReply {
    /// The mode of `line` (up to and including its newline) when it is exactly the encoder's state reply
    /// (`Outgoing.result(id: .int(1), state.json)`, no app), member for member; anything else is nil and goes to
    /// the general client, so a line taken here is one it takes, with the same mode. A walk with constant strings.
    package static func mode(ofLine line: UnsafeRawBufferPointer) -> Mode? {
        var s = Cursor(line)
        let mode: Mode
        guard s.take(#"{"jsonrpc":"2.0","id":1,"result":{"mode":""#) else { return nil }
        if s.take(#"light","darkMode":false,"system":""#) {
            mode = .light
        } else if s.take(#"dark","darkMode":true,"system":""#) {
            mode = .dark
        } else {
            return nil
        }
        // SystemScheme, Override and Source: every raw value, each with its closing quote.
        guard s.take(#"unavailable""#) || s.take(#"dark""#) || s.take(#"light""#) || s.take(#"no-preference""#),
              s.take(#","override":""#),
              s.take(#"system""#) || s.take(#"light""#) || s.take(#"dark""#),
              s.take(#","source":""#),
              s.take(#"system""#) || s.take(#"override""#) || s.take(#"default""#) || s.take(#"schedule""#)
                || s.take(#"temporary""#) || s.take(#"app""#) || s.take(#"light-sensor""#) || s.take(#"power""#),
              s.take(#","seq":"#), s.takeUInt64(),
              s.take(#","instance":""#), s.takePlainString(),
              s.take(#","traits":{"contrast":"#),
              s.take("null") || s.take(#""normal""#) || s.take(#""high""#),
              s.take(#","reducedMotion":"#),
              s.take("null") || s.take("false") || s.take("true"),
              s.take(#","accentColor":"#),
              s.take("null") || s.takeOpaqueHex(),
              s.take(#"},"temporary":"#),
              s.take("null") || s.takeTemporary(),
              s.take("}}\n"), s.atEnd
        else { return nil }
        return mode
    }

    /// A position in the line; each `take` moves past what it matched, or leaves the position alone.
    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { at == bytes.count }

        /// Compares eight bytes at a time: most of the line is constant text, and this is on every `get`.
        @inline(__always)
        mutating func take(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard bytes.count - at >= n, let base = bytes.baseAddress else { return false }
            let b = base + at
            let t = UnsafeRawPointer(text.utf8Start)
            var i = 0
            while i + 8 <= n {
                guard b.loadUnaligned(fromByteOffset: i, as: UInt64.self) == t.loadUnaligned(fromByteOffset: i, as: UInt64.self) else {
                    return false
                }
                i += 8
            }
            while i < n {
                guard b.load(fromByteOffset: i, as: UInt8.self) == t.load(fromByteOffset: i, as: UInt8.self) else { return false }
                i += 1
            }
            at += n
            return true
        }

        /// A JSON number that `JSON.uint64Value` reads: 0, or digits without a leading zero, at most UInt64.max.
        mutating func takeUInt64() -> Bool {
            var i = at
            var value: UInt64 = 0
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[i] - 0x30))
                guard !o1, !o2 else { return false }
                value = sum
                i += 1
            }
            guard i > at, bytes[at] != 0x30 || i == at + 1 else { return false }
            // A number ends at a delimiter the encoder writes after it, never at '.', 'e' or '-'.
            guard i < bytes.count, bytes[i] == UInt8(ascii: ",") || bytes[i] == UInt8(ascii: "}") else { return false }
            at = i
            return true
        }

        /// The rest of a string after its opening quote, and the closing quote: printable ASCII, no escape.
        mutating func takePlainString() -> Bool {
            var i = at
            while i < bytes.count {
                let c = bytes[i]
                if c == 0x22 { at = i + 1; return true }
                guard c >= 0x20, c < 0x7F, c != 0x5C else { return false }
                i += 1
            }
            return false
        }

        /// `"#rrggbb"` (`Color.opaqueHex`).
        mutating func takeOpaqueHex() -> Bool {
            guard bytes.count - at >= 9, bytes[at] == 0x22, bytes[at + 1] == UInt8(ascii: "#"), bytes[at + 8] == 0x22 else { return false }
            for i in (at + 2)..<(at + 8) {
                let c = bytes[i]
                guard (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46) else { return false }
            }
            at += 9
            return true
        }

        /// `{"mode":"dark","until":"next"}` or `{"mode":"light","until":UNIX_SECONDS}`.
        mutating func takeTemporary() -> Bool {
            let start = at
            guard take(#"{"mode":""#), take(#"light""#) || take(#"dark""#), take(#","until":"#),
                  take(#""next""#) || takeUInt64(), take("}") else {
                at = start
                return false
            }
            return true
        }
    }
}
