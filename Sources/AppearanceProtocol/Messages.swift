import AppearanceCore

/// The protocol version reported by `status`. Clients ignore fields they do not know; new methods and fields
/// never change the meaning of old ones; this number goes up when something is added.
/// 2: `traits` in the state object, `subscribe` params (`traits`, `palette`), the `resolve` and `palette` methods.
/// 3: temporary overrides (`set`/`toggle` params `until` and `for`, `temporary` in the state object), sources
///    `temporary` and `schedule`, the `log` method; `status` adds `schedule` and `portalBackend`.
/// 4: per-app overrides: `"app"` in the params of get, set, toggle, subscribe, resolve and palette; `app`,
///    `globalMode` and `globalSource` in an app's state object; source `app`; the `apps` method.
public let protocolVersion = 4

/// The longest line either side accepts, newline excluded.
public let maxLineLength = 65_536

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

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code.rawValue
        self.message = message
    }

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (error \(code))" }
}

public enum Method: String, CaseIterable, Sendable {
    case get, set, toggle, subscribe, status, resolve, palette, log, apps
}

/// App ids (`"app"` in params): 1-255 bytes of `A-Z a-z 0-9 . _ -`, not starting with a dot; a desktop-file
/// or Flatpak style id (`org.gnome.TextEditor`, `kitty`).
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
