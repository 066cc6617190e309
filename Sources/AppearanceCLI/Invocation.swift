import AppearanceCore
import AppearanceProtocol

// What a command line asks for, as a value: `parse` turns arguments into an `Invocation` (or a usage error).

/// A parsed command line: where the daemon is (`--socket`), and the command with everything it needs.
public struct Invocation: Equatable, Sendable {
    public var socket: String?
    public var command: Command

    public init(socket: String? = nil, _ command: Command) {
        self.socket = socket
        self.command = command
    }
}

public enum Command: Equatable, Sendable {
    case help
    /// `help CMD`, `CMD --help`: one command's help.
    case commandHelp(String)
    case version
    case completions(Shell)
    /// `completions list WHAT`: words for the completion scripts, from the running daemon (hidden).
    case completionList(CompletionList)
    case get(app: String?, json: Bool)
    case status(json: Bool)
    /// `set MODE`, for a while when `lifetime` is given (then the override is dark or light, never system).
    case set(Override, lifetime: Lifetime?, app: String?, json: Bool)
    case toggle(lifetime: Lifetime?, app: String?, json: Bool)
    /// `app`: only that app's own changes (no default from APPEARANCED_APP: everyone's log is the answer).
    case log(count: Int?, app: String? = nil, json: Bool)
    /// The schedule's changes over the next `days` days.
    case schedule(days: Int, json: Bool)
    /// `postpone DURATION`, `postpone --cancel`, `skip`, `skip --cancel`.
    case nextChange(NextChange.Request, json: Bool)
    case apps(json: Bool)
    /// The integrations, after enabling or disabling the ones named; `force`: even one not installed.
    case integrations(enable: [String], disable: [String], force: Bool = false, json: Bool)
    /// The daemon reads its config and palette again (as on SIGHUP).
    case reload
    case watch(Watch)
    case watchExec(command: [String], initial: Bool, app: String?)
    case color(token: String, variant: ResolveFor, format: ColorFormat)
    case asset(name: String, variant: ResolveFor)
    case palette(variant: ResolveFor, format: PaletteFormat)
    case palettePreview(contrast: Contrast?, color: ColorChoice)
    /// `force`: `-o FILE` may replace a file that exists.
    case paletteImport(light: String, dark: String, output: String?, force: Bool = false)
    /// `file` nil: darkman's own config file; `merge`: add to `-o FILE` what it lacks.

    case importDarkman(file: String?, output: String?, force: Bool = false, merge: Bool = false)
}

/// `watch` printing lines: what each line carries and what happens when the daemon goes away.
public struct Watch: Equatable, Sendable {
    public var app: String?
    public var json = false
    public var traits = false
    public var palette = false
    public var exitOnDisconnect = false

    public init(app: String? = nil, json: Bool = false, traits: Bool = false, palette: Bool = false, exitOnDisconnect: Bool = false) {
        (self.app, self.json, self.traits, self.palette, self.exitOnDisconnect) = (app, json, traits, palette, exitOnDisconnect)
    }
}

/// The appearance a palette value is resolved for: the protocol's, what is nil taken from the current state.
public typealias ResolveFor = VariantRequest

public enum ColorFormat: String, CaseIterable, Sendable {
    /// `#262626`, or `#26262699` when translucent.
    case hex
    /// `38 38 38`, or `38 38 38 0.6`: numbers for `read r g b a` in a shell.
    case rgb
    /// `rgb(38 38 38)`, or `rgb(38 38 38 / 0.6)`.
    case css
}

public enum PaletteFormat: String, CaseIterable, Sendable {
    case json, css, sh, gtk
}

/// `--color=` of `palette --preview`: auto means colors only on a terminal that shows them.
public enum ColorChoice: String, CaseIterable, Sendable {
    case auto, always, never
}

public enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}

/// A command line appearancectl cannot run: the message names the argument at fault.
public struct UsageError: Error, Equatable, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }
}
