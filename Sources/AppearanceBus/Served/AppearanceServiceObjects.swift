import AppearanceCore
import AppearanceProtocol

/// The D-Bus service's two objects, declared, and their calls, answered as the socket's requests are.
extension AppearanceService {
    /// What the own methods may carry: the mode (a name) and at most Request.maxMembers options of one basic value each.
    private static let optionBounds = DecodeBounds(depth: 3, values: 2 + 4 * (Request.maxMembers + 1), bytes: 16 * 1024)

    /// appearanced's object: its methods answered as the socket's requests, its properties the published state.
    var ownObject: ExportedObject {
        func method(_ name: String, _ args: KeyValuePairs<String, String>, _ out: KeyValuePairs<String, String>) -> ExportedMethod {
            ExportedMethod(name, in: args, out: out, bounds: AppearanceService.optionBounds,
                           tooBig: "\(name): at most \(Request.maxMembers) options, each a string, a number or a boolean, 16 KiB in all") {
                [unowned self] in self.method(name, $0)
            }
        }
        let properties: KeyValuePairs = ["Mode": "s", "DarkMode": "b", "Source": "s", "Override": "s", "System": "s",
                                         "Temporary": "a{sv}", "Traits": "a{sv}", "Seq": "t", "Instance": "s"]
        return ExportedObject(AppearanceService.path, [ExportedInterface(name: AppearanceService.interface, methods: [
            method("Get", ["options": "a{sv}"], ["state": "a{sv}"]),
            method("Set", ["mode": "s", "options": "a{sv}"], ["state": "a{sv}"]),
            method("Toggle", ["options": "a{sv}"], ["state": "a{sv}"]),
            method("Postpone", ["options": "a{sv}"], ["schedule": "a{sv}"]),
            method("Skip", ["options": "a{sv}"], ["schedule": "a{sv}"]),
        ], signals: [ExportedSignal("ModeChanged", ["mode": "s", "previous": "s"])],
           properties: properties.map { name, type in ExportedProperty(name, type, get: { [unowned self] in emitted[name] }) })],
           style: .freedesktop(comment: AppearanceService.comment))
    }

    /// darkman's object, as darkman serves it: the mode, which a Set writes as an override.
    var darkmanObject: ExportedObject {
        let mode = ExportedProperty("Mode", "s", get: { [unowned self] in emitted["Mode"] }) { [unowned self] value, call in
            guard case .string(let s) = value, let mode = Mode(rawValue: s) else { return .failure(.invalidArgs("Mode is \"light\" or \"dark\", not \(value)")) }
            write(.set(Override(mode)), app: nil, call) { _ in [] }
            return nil
        }
        return ExportedObject(AppearanceService.darkmanPath, [ExportedInterface(name: AppearanceService.darkmanInterface,
                                                                      signals: [ExportedSignal("ModeChanged", ["NewMode": "s"])], properties: [mode])],
                              style: .godbus)
    }

    /// Get, Set, Toggle, Postpone and Skip: the options are the socket's params (`Request.decode`), decided alike.
    private func method(_ member: String, _ call: BusCall) -> Answer? {
        guard let requests, let published else { return .failure(.unknownMethod(member, AppearanceService.path)) }
        var params: [(String, JSON)] = member == "Set" ? [("override", .string(call.string(0)))] : []
        let entries = if case .container(_, let entries)? = call.args.last { entries } else { [BusValue]() }
        for e in entries {
            guard case .container(_, let kv) = e, kv.count == 2, case .string(let key) = kv[0], case .variant(let v) = kv[1] else { continue }
            if member == "Set", key == "override" {
                return .failure(.invalidArgs("Set: the mode is the first argument, not an option"))
            }
            guard let json = AppearanceService.json(v) else {
                return .failure(.invalidArgs("\(member.lowercased()): option \"\(key)\" of type \(v.signature): a string, a number or a boolean"))
            }
            params.append((key, json))
        }
        let request: Request
        do {
            request = try Request.decode(method: member.lowercased(), params: .object(params))
        } catch {
            return .failure(AppearanceService.busError(error.error))
        }
        switch request.call {
        case .get:
            guard let app = request.app else { return .success([AppearanceService.value(published.json)]) }
            // One app's state is the daemon's to work out: answered when it comes back.
            requests.state(for: app) { call.reply(.success([AppearanceService.value($0.json)])) }
            return nil
        case .set, .toggle, .setTemporary, .toggleTemporary:
            write(request.call, app: request.app, call) { [AppearanceService.value($0.json)] }
            return nil
        case .nextChange(let word):
            requests.nextChange(word, by: "D-Bus \(call.message.sender ?? "peer")") { call.reply($0.map { [AppearanceService.value($0.json)] }.mapError(AppearanceService.busError)) }
            return nil
        default:
            return .failure(.unknownMethod(member, AppearanceService.path))
        }
    }

    /// Sends a write through the daemon's one entry for writes; the reply goes out once it is answered.
    private func write(_ c: Call, app: String?, _ call: BusCall, _ values: @escaping (AppearanceState) -> [BusValue]) {
        requests?.write(c, app: app, by: "D-Bus \(call.message.sender ?? "peer")") { call.reply($0.map(values).mapError(AppearanceService.busError)) }
    }
}
