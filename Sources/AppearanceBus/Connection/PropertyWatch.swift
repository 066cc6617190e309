// One service's properties followed on the bus client: read whole (GetAll) at every connection and new owner,
// kept up to date by PropertiesChanged, "absent, because …" while the service or the bus is not there. No polling.
import AppearanceCore
import Dispatch

final class PropertyWatch: BusPeer {
    // Confined to the client's queue.
    private let client: BusClient
    let service: String
    let path: String
    let interface: String
    private let bounds: DecodeBounds
    private let report: (PropertyReading) -> Void
    private var values: [String: BusValue]?
    /// The unique name that answered the last read: only its PropertiesChanged count.
    private var owner: String?
    /// Bumped by every new read, owner and loss: an answer to an older read is dropped.
    private var epoch = 0
    static let properties = "org.freedesktop.DBus.Properties"

    /// Starts following; `report` gets every reading, on the client's queue; `bounds`: what one answer may hold.
    init(_ client: BusClient, service: String, path: String, interface: String,
         bounds: DecodeBounds = DecodeBounds(depth: 4, values: 1024, bytes: 64 * 1024), report: @escaping (PropertyReading) -> Void) {
        (self.client, self.service, self.path, self.interface, self.bounds, self.report) = (client, service, path, interface, bounds, report)
        client.addMatch("type='signal',sender='\(service)',path='\(path)',interface='\(Self.properties)',"
                        + "member='PropertiesChanged',arg0='\(interface)'", for: self)
        client.onSignal(Self.properties, "PropertiesChanged", for: self) { [weak self] message in self?.changed(message) }
        client.follow(service, for: self) { [weak self] owner in self?.ownerChanged(owner) }
        client.add(self)
    }

    /// Stops following: the rules leave the bus, nothing more is reported.
    func cancel() {
        epoch += 1
        client.forget(self)
    }

    func connected(_ connection: BusConnection) { readAll() }

    func disconnected(_ detail: String) { lost(detail) }

    private func lost(_ why: String) {
        epoch += 1
        (values, owner) = (nil, nil)
        report(.absent(why))
    }

    private func ownerChanged(_ owner: String?) {
        if owner == nil { lost("\(service) left the \(client.label)") } else { readAll() }
    }

    private func readAll() {
        epoch += 1
        let asked = epoch
        let sent = client.call(service, path, Self.properties, "GetAll", [.string(interface)]) { [weak self] reply in
            guard let self, self.epoch == asked else { return }
            self.answered(reply)
        }
        if !sent { lost("the \(client.label) went away") }
    }

    private func answered(_ reply: Message) {
        if let error = reply.error {
            switch error.name {
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                return lost("\(service) is not on the \(client.label)")
            case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface",
                 "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.InvalidArgs":
                return lost("\(service) has no \(interface) at \(path) (\(error.name))")
            default:
                return lost("\(service) did not answer GetAll (\(error))")
            }
        }
        guard reply.hasSignature("a{sv}"), let args = reply.arguments(limit: 1, within: bounds), let all = args.first,
              let read = Self.dictionary(all) else {
            return lost("\(service)'s properties are not a{sv} within bounds (\(reply.signature))")
        }
        (owner, values) = (reply.sender, read)
        report(.values(read))
    }

    private func changed(_ message: Message) {
        guard message.path == path, let owner, message.sender == owner, values != nil else { return }
        guard message.hasSignature("sa{sv}as"), let args = message.arguments(within: bounds), args.count == 3,
              args[0] == .string(interface), let changed = Self.dictionary(args[1]),
              case .container(_, let invalidated) = args[2] else {
            // Past its bounds or of another shape: what it said is unknown, so everything is read again.
            return readAll()
        }
        guard invalidated.isEmpty else { return readAll() }
        values?.merge(changed) { _, new in new }
        if let values { report(.values(values)) }
    }

    /// An a{sv} as a dictionary of the variants' values; nil for anything else.
    static func dictionary(_ value: BusValue) -> [String: BusValue]? {
        guard case .container(_, let entries) = value else { return nil }
        var out: [String: BusValue] = [:]
        for entry in entries {
            guard case .container(_, let kv) = entry, kv.count == 2, case .string(let key) = kv[0] else { return nil }
            out[key] = kv[1].unwrapped
        }
        return out
    }
}
