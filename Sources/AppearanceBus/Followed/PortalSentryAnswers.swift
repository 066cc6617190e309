import AppearanceCore
import Dispatch

/// What the portal's answers mean: color-scheme's as a reading, a trait's as a trait, decoded within small bounds.
extension PortalSentry {
    func interpret(_ reply: Message, method: String) -> SystemReading {
        if let error = reply.error {
            shape = nil
            return interpret(error)
        }
        shape = method == "Read" ? .read : .readOne
        let source = method == "Read" ? "portal v1 (Read fallback)" : "portal v2"
        // The usual answer, read without decoding; anything else is decoded and judged below.
        if let number = reply.variantUInt32(), let scheme = SystemScheme(portalValue: number) {
            return SystemReading(scheme, detail: source)
        }
        guard let args = boundedValue(of: reply) else {
            log(.warning, "the portal's answer to \(method) for color-scheme is larger or more deeply nested than any setting; treating it as no preference")
            return SystemReading(.noPreference, detail: "\(source), unusable value (too large)")
        }
        guard let value = args.first?.unwrapped else {
            log(.warning, "the portal answered \(method) without a value; treating color-scheme as no preference")
            return SystemReading(.noPreference, detail: "\(source), empty answer")
        }
        if case .uint32(let number) = value {
            if let scheme = SystemScheme(portalValue: number) { return SystemReading(scheme, detail: source) }
            log(.warning, "the portal's color-scheme is \(number), which is not 0, 1 or 2; treating it as no preference")
            return SystemReading(.noPreference, detail: "\(source), unknown value \(number)")
        }
        log(.warning, "the portal's color-scheme has type '\(value.signature)' (value \(value)), expected 'u'; treating it as no preference")
        return SystemReading(.noPreference, detail: "\(source), unusable '\(value.signature)' value")
    }

    /// Stores what a read of a trait key says: nil for an error, NotFound included, or a value of the wrong type.
    func interpretTrait(_ reply: Message, key: String, method: String) {
        var value: BusValue?
        if let error = reply.error {
            if error.name != "org.freedesktop.portal.Error.NotFound" {
                log(.debug, "reading the portal's \(key) failed (\(error)); treating it as unavailable")
            }
        } else {
            shape = method == "Read" ? .read : .readOne
            if let args = boundedValue(of: reply) {
                value = args.first?.unwrapped
                if value == nil { log(.warning, "the portal answered \(method) for \(key) without a value; treating it as unset") }
            } else {
                log(.warning, "the portal's answer to \(method) for \(key) is larger or more deeply nested than any setting; treating it as unset")
            }
        }
        func number() -> UInt32? {
            guard let value else { return nil }
            guard case .uint32(let n) = value else {
                log(.warning, "the portal's \(key) has type '\(value.signature)' (value \(value)), expected 'u'; treating it as unset")
                return nil
            }
            return n
        }
        switch key {
        case PortalSentry.contrastKey:
            traits.contrast = number().flatMap { n in
                let c = Contrast(portalValue: n)
                if c == nil { log(.warning, "the portal's contrast is \(n), which is not 0 or 1; treating it as unset") }
                return c
            }
        case PortalSentry.reducedMotionKey:
            traits.reducedMotion = number().flatMap { n in
                if n > 1 { log(.warning, "the portal's reduced-motion is \(n), which is not 0 or 1; treating it as unset"); return nil }
                return n == 1
            }
        case PortalSentry.accentKey:
            traits.accentColor = nil
            guard let value else { break }
            guard case .container("(ddd)", let parts) = value, case .double(let r) = parts[0],
                  case .double(let g) = parts[1], case .double(let b) = parts[2] else {
                log(.warning, "the portal's accent-color has type '\(value.signature)' (value \(value)), expected '(ddd)'; treating it as unset")
                break
            }
            traits.accentColor = Traits.accent(red: r, green: g, blue: b)
            if traits.accentColor == nil { log(.debug, "the portal's accent-color (\(r), \(g), \(b)) is outside 0…1: unset") }
        default:
            break
        }
    }

    /// A read's answer, at most one value within `DecodeBounds.small`; nil past them (docs/decisions.md, "One huge
    /// D-Bus call").
    func boundedValue(of reply: Message) -> [BusValue]? {
        guard let args = reply.arguments(limit: 1, within: .small) else {
            connection?.returnFreeMemorySoon()
            return nil
        }
        return args
    }

    func interpret(_ error: BusError) -> SystemReading {
        switch error.name {
        case "org.freedesktop.portal.Error.NotFound":
            // Unavailable, not no-preference: no backend provides appearance, so the daemon's default stands.
            return SystemReading(.unavailable, detail: "portal has no color-scheme setting (NotFound)")
        case "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
             "org.freedesktop.DBus.Error.UnknownObject":
            // 1.16 does not export Settings at all when no backend provides it.
            return SystemReading(.unavailable, detail: "portal has no Settings interface")
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return SystemReading(.unavailable, detail: "no portal on the session bus (\(PortalSentry.portal): \(error.name))")
        case _ where error.name.hasPrefix("org.freedesktop.DBus.Error.Spawn"):
            log(.warning, "the session bus could not start the portal: \(error)")
            return SystemReading(.unavailable, detail: "no portal on the session bus (\(PortalSentry.portal): \(error.name))")
        default:
            log(.warning, "reading the portal's color-scheme failed: \(error)")
            return SystemReading(.unavailable, detail: "portal read failed (\(error.name))")
        }
    }
}
