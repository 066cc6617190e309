// TEMPORARY until the config parser lands.
import AppearanceCore
public struct Config: Equatable, Sendable {
    public var defaultMode: Mode = .light
    public var logLevel: LogLevel? = nil
    public init() {}
    public static func load(path: String) throws -> Config? { nil }
}
