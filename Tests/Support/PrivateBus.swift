import Foundation

/// A real `dbus-daemon` of its own for one test, listening on `unix:path=<directory>/<name>`, with a
/// config of its own: by default nothing is activatable, so a missing portal stays missing (the
/// standard session config would start the real xdg-desktop-portal). Ended by `stop()` or on deinit.
public final class PrivateBus: @unchecked Sendable {
    /// `unix:path=…`, without the guid, so it stays valid for a bus restarted at the same path.
    public let address: String
    public let socketPath: String
    public let process: Subprocess

    /// - Parameters:
    ///   - directory: the test's directory; the socket, config and stderr log go there.
    ///   - name: socket file name, distinct per bus when a test runs several.
    ///   - serviceDirectories: directories of `.service` files for D-Bus activation.
    ///   - standardSessionServices: also activate from the system's session service dirs
    ///     (`/usr/share/dbus-1/services`, where the real portal is); for end-to-end tests.
    ///   - environment: the daemon's environment, which activated services inherit; nil inherits ours.
    public init(in directory: TemporaryDirectory, name: String = "bus", serviceDirectories: [String] = [],
                standardSessionServices: Bool = false, environment: [String: String]? = nil) async throws {
        socketPath = directory.file(name)
        address = "unix:path=\(socketPath)"
        let services = serviceDirectories.map { "  <servicedir>\(xmlEscaped($0))</servicedir>\n" }.joined()
            + (standardSessionServices ? "  <standard_session_servicedirs/>\n" : "")
        let config = Self.config(listen: address, extra: services)
        let configPath = directory.file("\(name).conf")
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        process = try Subprocess(name: "dbus-daemon (\(name))", executable: "/usr/bin/dbus-daemon",
                                 arguments: ["--config-file=\(configPath)", "--nofork", "--print-address=1"],
                                 environment: environment, stderrPath: directory.file("\(name).stderr"))
        // The address is printed once the socket is listening.
        try await process.nextLine("its address") { $0.hasPrefix("unix:") }
    }

    /// A bus config of `type` listening on `listen`, with `extra` lines (activation, limits) before the policy,
    /// which lets anyone own any name, call anything and eavesdrop.
    public static func config(type: String = "session", listen: String, extra: String = "") -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>\(type)</type>
          <listen>\(xmlEscaped(listen))</listen>
          <auth>EXTERNAL</auth>
        \(extra)  <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """
    }

    /// Ends the daemon (SIGTERM, then SIGKILL). Clients see the bus disconnect; activated services exit.
    public func stop() { process.terminate() }

    deinit { stop() }
}

private func xmlEscaped(_ s: String) -> String {
    s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;")
}
