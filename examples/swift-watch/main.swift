// appearance-example: a small app on AppearanceKit. It prints the mode, then every change, and says when the
// daemon goes away and comes back. `appearance-example toggle` flips the mode first.
//
//     swift run appearance-example [--socket PATH] [toggle]
import AppearanceKit

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

var socket: String?
var toggleFirst = false
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--socket": socket = args.popFirst()
    case "toggle": toggleFirst = true
    default: fputs("usage: appearance-example [--socket PATH] [toggle]\n", stderr); exit(64)
    }
}

do {
    let client = try await AppearanceClient(socketPath: socket)
    if toggleFirst { print("toggled to", try await client.toggle().mode.rawValue) }
    let status = try await client.status()
    print("appearanced \(status.version) (protocol \(status.protocolVersion)), system: \(status.state.system.rawValue)")
    for try await change in client.changes() {
        switch change {
        case .initial(let state): print("now \(state.mode.rawValue)")
        case .changed(let state, let previous): print("\(previous.rawValue) -> \(state.mode.rawValue)")
        case .paletteChanged: break  // only with changes(palette: true)
        case .connectionLost(let error): print("lost: \(error)")
        case .reconnected: print("reconnected")
        }
        fflush(stdout)
    }
} catch {
    fputs("appearance-example: \(error)\n", stderr)
    exit(1)
}
