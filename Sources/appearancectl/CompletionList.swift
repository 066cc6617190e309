import AppearanceCLI
import AppearanceKit

/// `completions list WHAT`: the words a completion script offers, one a line, from the daemon on `socket`.
func printCompletionList(_ what: CompletionList, socket: String?) {
    // For a Tab press: a short deadline, and silence (no words, exit 0) when no daemon answers in time.
    guard let c = try? AppearanceConnection(socketPath: socket, timeout: 0.5) else { return }
    let words: [String] = switch what {
    case .colors: ((try? c.palette())?.colors.map(\.name)) ?? []
    case .assets: ((try? c.palette())?.assets.map(\.name)) ?? []
    case .apps: ((try? c.apps())?.map(\.app)) ?? []
    case .integrations: ((try? c.integrations())?.filter { !$0.enabled && $0.path != nil }.map(\.name)) ?? []
    case .enabledIntegrations: ((try? c.integrations())?.filter(\.enabled).map(\.name)) ?? []
    }
    // Only names a shell takes as they are (a quoted TOML key may hold a space or `$(…)`).

    func plain(_ u: Unicode.Scalar) -> Bool { u.properties.isAlphabetic || u.properties.numericType != nil || "._-+@/".unicodeScalars.contains(u) }
    for w in words where !w.isEmpty && w.unicodeScalars.allSatisfy(plain) { out(w) }
}
