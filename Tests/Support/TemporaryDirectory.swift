import Foundation

/// A fresh directory for one test, removed with everything in it when the object goes away.
/// Swift Testing runs tests in parallel: derive every socket, bus address and state path from one of these.
public final class TemporaryDirectory: Sendable {
    public let path: String

    /// Creates `<tmp>/<prefix>.XXXXXX`. The path is kept short because Unix socket paths are limited
    /// to 107 bytes: when `$TMPDIR` is long, `/tmp` is used instead.
    public init(prefix: String = "appearanced-test") throws {
        var base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        if base.isEmpty || base.utf8.count > 60 { base = "/tmp" }
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TestSupportError("cannot create a temporary directory in \(base): \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    /// `path/name`.
    public func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
