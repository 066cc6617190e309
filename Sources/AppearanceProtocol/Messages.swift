import AppearanceCore

/// The protocol version reported by `status`: it goes up when something is added (docs/protocol.md, "Versioning").
public let protocolVersion = 8

/// The longest line the daemon accepts from a client, newline excluded.
public let maxLineLength = 65_536

/// The longest line a client accepts from the daemon, newline excluded: above the largest reply or
/// notification the daemon can write (docs/protocol.md, "Framing"). In encoded bytes:
///
///     apps     4,096 overrides (AppID.maxOverrides) × 285 = 1,167,360
///              (`{"app":"` 8 + id 255 + `","override":"` 14 + `light` 5 + `"}` 2 + `,` 1)
///     log      1,000 entries (the daemon keeps 1,000; `limit` only shortens the list) × 4,449 = 4,449,000
///              (`{"time":` 8 + 19 digits + `,"from":"light"` 15 + `,"to":"light"` 13 + `,"source":"temporary"` 21
///              + `,"app":"` 8 + id 255 + `"` 1 + `,"cause":` 9 + cause 4,098 (ReplyBounds.logCause and its quotes)
///              + `}` 1 + `,` 1)
///     palette  4,096 tokens (ReplyBounds.paletteTokens) × 4,357 = 17,846,272
///              (`"` 1 + name 255 + `":"` 3 + value 4,096 + `"` 1 + `,` 1; ReplyBounds.tokenName and .tokenValue);
///              `palette`, `resolve` (each token once), and `subscribe` and `changed` with a palette
///     + 65,536 (maxLineLength) for what surrounds the largest of them: the envelope, the id the client
///              chose (it came in a request line), the mode and contrast, a state object (under 1 KiB)
///     = 17,911,808, rounded up to 18 MiB. `status` quotes at most its config and palette files' errors.
public let maxReplyLength = 18 << 20

/// What bounds a reply beyond the app overrides' cap and the log's 1,000 entries: maxReplyLength counts on them.
public enum ReplyBounds {
    /// Tokens in a palette.
    public static let paletteTokens = 4_096
    /// A token's name, JSON-encoded, quotes excluded.
    public static let tokenName = 255
    /// A token's value (a color, or an asset's path: PATH_MAX), JSON-encoded, quotes excluded.
    public static let tokenValue = 4_096
    /// A log entry's cause, JSON-encoded, quotes excluded.
    public static let logCause = 4_096
}

/// JSON-RPC 2.0 error codes (and the one server-defined code this protocol uses).
public enum ErrorCode: Int, Sendable {
    case parseError = -32700
    case invalidRequest = -32600
    case methodNotFound = -32601
    case invalidParams = -32602
    case internalError = -32603
    /// The request was understood but could not be carried out (e.g. the override could not be saved).
    case requestFailed = -32000
}

public struct RPCError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String

    public init(_ code: ErrorCode, _ message: String) { (self.code, self.message) = (code.rawValue, message) }

    public init(code: Int, message: String) { (self.code, self.message) = (code, message) }

    public var description: String { "\(message) (error \(code))" }
}

public enum Method: String, CaseIterable, Sendable {
    case get, set, toggle, subscribe, status, resolve, palette, log, apps, reload, schedule, integrations, postpone, skip
}

/// App ids (`"app"` in params): 1-255 bytes of `A-Z a-z 0-9 . _ -`, not starting with a dot (`org.gnome.TextEditor`).
public enum AppID {
    public static func isValid(_ id: String) -> Bool {
        let b = Array(id.utf8)
        guard (1...255).contains(b.count), b[0] != UInt8(ascii: ".") else { return false }
        return b.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x5F || c == 0x2D
        }
    }

    /// Overrides a daemon keeps at most.
    public static let maxOverrides = 4096
}

func frame(_ json: JSON) -> [UInt8] {
    var out = json.bytes
    out.append(0x0A)
    return out
}

/// The version of appearanced, appearancectl and AppearanceKit (they are released together).
public let packageVersion = "0.1.0"
