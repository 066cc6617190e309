import AppearanceFormats
import AppearanceKit
import AppearancePosix
import AppearanceProtocol

// `appearancectl integrations`: the daemon's list, and what each integration says of itself, asked here.

/// What an integration says of itself: `NAME available` and `NAME describe`.
struct IntegrationFacts {
    var available: Bool?
    var availability: String
    var description = IntegrationDescription(output: "")
}

/// What each integration in `list` says of itself, all asked at once under one 2 s deadline (not one the daemon
/// would not run).
func facts(_ list: [IntegrationInfo], describe: Bool = true) -> [IntegrationFacts] {
    let problems = list.map { info in info.path.flatMap { Trust.integrationProblem($0) } }
    let verbs = describe ? ["available", "describe"] : ["available"]
    let jobs = zip(list, problems).flatMap { info, problem in
        (problem == nil ? info.path : nil).map { path in verbs.map { (path: path, verb: $0) } } ?? []
    }
    var answers = SideBySide.run(jobs.map { [$0.path, $0.verb] }, deadline: Deadline(seconds: 2))[...]
    return zip(list, problems).map { info, problem in
        guard let path = info.path else { return IntegrationFacts(available: nil, availability: "not found (the file is gone)") }
        if let problem { return IntegrationFacts(available: nil, availability: "not run: \(problem)") }
        let available = answers.popFirst() ?? nil
        let described = describe ? answers.popFirst() ?? nil : nil
        var f = IntegrationFacts(available: nil, availability: "unknown (\(path) available did not answer within 2 s)")
        if let r = available {
            f.available = r.ok
            f.availability = r.output.split(separator: "\n").first.map(String.init) ?? (r.ok ? "installed" : "not installed")
        }
        if let r = described, r.ok { f.description = IntegrationDescription(output: r.output) }
        return f
    }
}

func describeRun(_ run: IntegrationInfo.Run?) -> String {
    guard let run else { return "none since the daemon started" }
    let l = Posix.localTime(run.time)
    let mode = run.mode.map { " \($0.rawValue)" } ?? ""
    return "\(run.action)\(mode) at \(l.date) \(l.clock): \(run.result)"
}

func integrationJSON(_ info: IntegrationInfo, _ f: IntegrationFacts) -> JSON {
    guard case .object(let members) = info.json else { return info.json }
    return .object(members + [("available", f.available.map(JSON.bool) ?? .null), ("availability", .string(f.availability)),
                              ("what", .string(f.description.what)), ("touches", .string(f.description.touches)),
                              ("settings", .string(f.description.settings))])
}

/// `integrations [--json]`: one block per integration, or one JSON object per line.
func printIntegrations(_ list: [IntegrationInfo], json: Bool) {
    if list.isEmpty, !json {
        out("no integrations found: \(IntegrationName.howToGet) (a copy of yours goes in ~/.config/appearanced/integrations)")
        return
    }
    for (info, f) in zip(list, facts(list)) {
        if json { out(integrationJSON(info, f).text); continue }
        let d = f.description
        out("""
            \(info.name): \(info.enabled ? "enabled" : "off")\(info.app == info.name ? "" : " (follows app \(info.app))")
              program:  \(f.availability)
              changes:  \(d.what.isEmpty ? "?" : d.what)
              touches:  \(d.touches.isEmpty ? "?" : d.touches)
              settings: \(d.settings.isEmpty ? "?" : d.settings) ([integrations.\(info.name)] in config.toml)
              last run: \(describeRun(info.last))
              file:     \(info.path ?? "not found")
            """)
    }
}

/// `integrations enable|disable NAME...`: the change, then each one's run once it has ended (at most `runsWait`
/// seconds); exit 65 when one failed, or one to enable is not installed (unless `force`: nothing changed).
func changeIntegrations(socket: String?, enable: [String], disable: [String], force: Bool, json: Bool) -> Never {
    let c = connect(socket)
    let current = ask(try c.integrations())
    if !force { refuseMissingPrograms(current.filter { enable.contains($0.name) && !$0.enabled && $0.path != nil }) }
    let before = Dictionary(current.map { ($0.name, $0.runs) }, uniquingKeysWith: { a, _ in a })
    let wasEnabled = Set(current.filter(\.enabled).map(\.name))
    let reply: (list: [IntegrationInfo], run: Bool)
    var told = true
    do {
        reply = try c.integrationsReply(enable: enable, disable: disable, wait: runsWait)
    } catch .rejected(let e) where e.code == ErrorCode.invalidParams.rawValue && e.message.hasSuffix("unknown parameter \"wait\"") {
        // A daemon older than protocol 8 refused the whole request: asked again without "wait", it does not say when runs end.
        told = false
        do { reply = try c.integrationsReply(enable: enable, disable: disable) } catch { fail(error) }
    } catch {
        fail(error)
    }
    let names = enable + disable
    // What changes nothing runs nothing; a trial instance runs none.
    let waiting = reply.run ? names.filter { enable.contains($0) != wasEnabled.contains($0) } : []
    // `runs` counts the finished ones: a run from before the change is never mistaken for its own.
    var results: [String: IntegrationInfo] = [:]
    for info in reply.list where waiting.contains(info.name) && info.runs > (before[info.name] ?? 0) { results[info.name] = info }
    var failed = false
    for name in names {
        let verb = !enable.contains(name) ? "disabled" : results[name]?.enabled == false ? "enabling failed" : "enabled"
        guard let info = results[name] else {
            let pending = told ? "no result within \(runsWait) s (appearancectl integrations shows it later)"
                : "no result yet: this daemon does not say when runs end (it is older than protocol 8; appearancectl integrations shows it later)"
            out(json ? JSON.object([("name", .string(name)), ("result", .null)]).text
                : "\(name): \(verb); " + (!reply.run ? "not run: this instance runs none (a trial instance: --state-dir without --hooks)"
                    : waiting.contains(name) ? pending : "nothing to do"))
            continue
        }
        if let last = info.last, !last.ok { failed = true }
        out(json ? integrationJSON(info, IntegrationFacts(available: nil, availability: "")).text : "\(name): \(verb); \(describeRun(info.last))")
    }
    Posix.exit(failed ? Exit.rejected : Exit.ok)
}

/// How long `integrations enable|disable` waits for the runs it started.
let runsWait = 40

/// Ends the run (exit 65, nothing changed) when one of `list` says or does not say its program is installed.

func refuseMissingPrograms(_ list: [IntegrationInfo]) {
    let refused = zip(list, facts(list, describe: false)).filter { _, f in
        f.available == false || (f.available == nil && !f.availability.hasPrefix("not run:"))
    }
    guard !refused.isEmpty else { return }
    for (info, f) in refused { note("integrations enable: \(info.name): \(f.availability)") }
    let it = refused.count == 1 ? "it" : "them"
    note("nothing enabled (--force enables \(it) anyway: \(refused.count == 1 ? "its" : "their") files are prepared for when the program is installed)")
    Posix.exit(Exit.rejected)
}
