import AppearanceKit
import ArgumentParser

// The same `get` as appearancectl's: connect, ask, print the mode (or the state object with --json).
struct AppearanceCtl: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "appearancectl", subcommands: [Get.self])

    struct Get: ParsableCommand {
        @Option(help: "talk to the daemon on PATH") var socket: String?
        @Flag(help: "print the state object") var json = false
        @Option(help: "for this app id") var app: String?

        func run() throws {
            do {
                let c = try AppearanceConnection(socketPath: socket, app: app)
                let s = try c.state()
                print(json ? "\(s)" : s.mode.rawValue)
            } catch {
                print("appearancectl: \(error)")
                throw ExitCode(69)
            }
        }
    }
}

AppearanceCtl.main()
