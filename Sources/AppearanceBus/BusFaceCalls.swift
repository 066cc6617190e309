import AppearanceCore
import AppearanceProtocol

/// The D-Bus face's own methods, answered as the socket's requests are.
extension BusFace {
    /// Get, Set, Toggle, Postpone and Skip: the options become the socket's params, so the socket's own checks and messages
    /// apply (`Request.decode`), and the call goes to the same decision as a socket client's.
    func method(_ call: Message, _ member: String, _ requests: FaceRequests, _ published: AppearanceState) -> Result<[BusValue], BusError>? {
        let signature = member == "Set" ? "sa{sv}" : "a{sv}"
        guard call.hasSignature(signature) else { return .failure(invalidArgs("\(member) takes (\(signature)), not (\(call.signature))")) }
        // The mode (a name) and at most Request.maxMembers options of one basic value each.
        let bounds = DecodeBounds(depth: 3, values: 2 + 4 * (Request.maxMembers + 1), bytes: 16 * 1024)
        guard let args = call.arguments(within: bounds) else {
            return .failure(invalidArgs("\(member): at most \(Request.maxMembers) options, each a string, a number or a boolean, 16 KiB in all"))
        }
        var params: [(String, JSON)] = []
        if member == "Set", case .string(let mode) = args[0] { params.append(("override", .string(mode))) }
        guard case .container(_, let entries)? = args.last else { return .failure(invalidArgs("\(member): no options")) }
        for e in entries {
            guard case .container(_, let kv) = e, kv.count == 2, case .string(let key) = kv[0], case .variant(let v) = kv[1] else { continue }
            if member == "Set", key == "override" {
                return .failure(invalidArgs("Set: the mode is the first argument, not an option"))
            }
            guard let json = BusFace.json(v) else {
                return .failure(invalidArgs("\(member.lowercased()): option \"\(key)\" of type \(v.signature): a string, a number or a boolean"))
            }
            params.append((key, json))
        }
        let request: Request
        do {
            request = try Request.decode(method: member.lowercased(), params: .object(params))
        } catch {
            return .failure(BusFace.busError(error.error))
        }
        switch request.call {
        case .get:
            guard let app = request.app else { return .success([BusFace.value(published.json)]) }
            // One app's state is the daemon's to work out: answered when it comes back.
            let connection = bus
            requests.state(for: app) { [weak self] state in
                guard let self, let connection, self.bus === connection else { return }
                self.reply(to: call, .success([BusFace.value(state.json)]))
            }
            return nil
        case .set, .toggle, .setTemporary, .toggleTemporary:
            write(request.call, app: request.app, for: call, requests) { [BusFace.value($0.json)] }
            return nil
        case .nextChange(let word):
            let connection = bus
            requests.nextChange(word, by: "D-Bus \(call.sender ?? "peer")") { [weak self] result in
                guard let self, let connection, self.bus === connection else { return }
                self.reply(to: call, result.map { [BusFace.value($0.json)] }.mapError(BusFace.busError))
            }
            return nil
        default:
            return .failure(unknownMethod(call, member, BusFace.path))
        }
    }

    /// Sends a write through the daemon's one entry for writes; the reply goes out once it is answered, on the
    /// connection it came from (none if that bus is gone by then).
    func write(_ c: Call, app: String?, for call: Message, _ requests: FaceRequests,
                       _ values: @escaping (AppearanceState) -> [BusValue]) {
        let connection = bus
        let who = "D-Bus \(call.sender ?? "peer")"
        requests.write(c, app: app, by: who) { [weak self] result in
            guard let self, let connection, self.bus === connection else { return }
            self.reply(to: call, result.map(values).mapError(BusFace.busError))
        }
    }
}
