import Foundation
import Testing

/// The one dispatcher of the objects appearanced serves (Sources/AppearanceBus/Served/ExportedObject.swift), through a
/// real dbus-daemon: each refusal has one name and a message naming the culprit, whichever object is asked.
@Suite struct ExportedObjectTests {
    typealias Service = AppearanceServiceTests
    static let properties = "org.freedesktop.DBus.Properties"

    /// One call with dbus-send, which sends what gdbus would refuse to: its reply, or its error's name and message.
    static func send(_ s: Sandbox, _ dest: String, _ path: String, _ method: String, _ args: [String] = []) throws -> String {
        let r = try s.run("/usr/bin/dbus-send", ["--session", "--print-reply=literal", "--reply-timeout=20000", "--dest=\(dest)", path, method] + args)
        return (r.out + r.err).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func refusalsHaveOneVocabularyOnEveryObject() throws {
        let served = try Service.Served()
        let s = served.sandbox
        let (own, dm) = ((Service.name, Service.path), (Service.darkman, Service.darkmanPath))
        let cases: [((String, String), String, [String], String)] = [
            // The signature, checked before anything is decoded.
            (own, "\(Service.name).Toggle", ["string:x"], "Error org.freedesktop.DBus.Error.InvalidArgs: Toggle takes (a{sv}), not (s)"),
            (own, "\(Self.properties).Get", ["string:\(Service.name)"], "Error org.freedesktop.DBus.Error.InvalidArgs: Get takes (ss), not (s)"),
            (dm, "\(Self.properties).Set", ["string:\(Service.darkman)", "string:Mode"],
             "Error org.freedesktop.DBus.Error.InvalidArgs: Set takes (ssv), not (ss)"),
            // An interface, a method, a property the object does not have.
            (own, "org.example.Nope.Get", [], "Error org.freedesktop.DBus.Error.UnknownInterface: no interface org.example.Nope at \(Service.path)"),
            (dm, "\(Self.properties).GetAll", ["string:org.example.Nope"],
             "Error org.freedesktop.DBus.Error.UnknownInterface: no interface org.example.Nope at \(Service.darkmanPath)"),
            (own, "\(Service.name).Frobnicate", ["uint32:1"],
             "Error org.freedesktop.DBus.Error.UnknownMethod: no method \(Service.name).Frobnicate(u) at \(Service.path)"),
            (own, "\(Self.properties).Get", ["string:\(Service.name)", "string:Nope"],
             "Error org.freedesktop.DBus.Error.UnknownProperty: no property \(Service.name).Nope"),
            (dm, "\(Self.properties).Get", ["string:", "string:Nope"], "Error org.freedesktop.DBus.Error.UnknownProperty: no property Nope"),
            (dm, "\(Self.properties).Set", ["string:\(Service.name)", "string:Mode", "variant:string:dark"],
             "Error org.freedesktop.DBus.Error.UnknownProperty: no property \(Service.name).Mode"),
            // Set: a read-only property, a value of the wrong type, one past the bounds.
            (own, "\(Self.properties).Set", ["string:\(Service.name)", "string:Mode", "variant:string:dark"],
             "Error org.freedesktop.DBus.Error.PropertyReadOnly: the property \(Service.name).Mode is read-only"),
            (dm, "\(Self.properties).Set", ["string:", "string:Mode", "variant:uint32:1"],
             "Error org.freedesktop.DBus.Error.InvalidArgs: \(Service.darkman).Mode is of type s, not u"),
            (dm, "\(Self.properties).Set", ["string:\(Service.darkman)", "string:\(String(repeating: "M", count: 1025))", "variant:string:dark"],
             "Error org.freedesktop.DBus.Error.InvalidArgs: Set takes two names and a value of a basic type, at most 1024 bytes each"),
            // An empty interface name means any; the standard interfaces have no properties.
            (dm, "\(Self.properties).Get", ["string:", "string:Mode"], "variant       light"),
            (own, "\(Self.properties).GetAll", ["string:org.freedesktop.DBus.Peer"], "array ["),
        ]
        for ((dest, path), method, args, expected) in cases {
            let out = try Self.send(s, dest, path, method, args)
            #expect(out.hasPrefix(expected), "\(method) \(args) on \(path): \(out)")
        }
        #expect(try s.ctl("get").out == "light\n")
        #expect(served.daemon.isRunning)
    }

    /// Introspect answers the shipped files, asked with or without the interface's name; a call that names no
    /// interface goes to the object's own method of that name; Peer is libdbus's.
    @Test func introspectAndCallsWithoutAnInterface() throws {
        let served = try Service.Served()
        let s = served.sandbox
        let ownXML = try String(contentsOfFile: Service.repo + "/dbus/\(Service.name).xml", encoding: .utf8)
        let darkmanXML = try String(contentsOfFile: Service.repo + "/dbus/\(Service.darkman).xml", encoding: .utf8)
        #expect(try Service.introspect(s, Service.name, Service.path) == ownXML)
        #expect(try Service.introspect(s, Service.darkman, Service.darkmanPath) + "\n" == darkmanXML)

        let script = """
            import dbus, sys
            b = dbus.SessionBus()
            def call(dest, path, method, sig="", args=()):
                return b.call_blocking(dest, path, None, method, sig, args, timeout=20)
            xml = call("\(Service.name)", "\(Service.path)", "Introspect")
            state = call("\(Service.name)", "\(Service.path)", "Get", "a{sv}", [{}])
            print(xml == open(sys.argv[1]).read(), str(state["mode"]), str(call("\(Service.darkman)", "\(Service.darkmanPath)", "GetAll", "s", [""])["Mode"]))
            """
        let r = try s.run("/usr/bin/python3", ["-c", script, Service.repo + "/dbus/\(Service.name).xml"])
        #expect(r.status == 0 && r.out == "True light light\n", "\(r)")
        #expect(try Self.send(s, Service.name, Service.path, "org.freedesktop.DBus.Peer.Ping") == "")
    }

    /// A call that expects no reply is carried out all the same: darkman's Set from dbus-send without --print-reply.
    @Test func aCallThatExpectsNoReplyIsCarriedOut() throws {
        let served = try Service.Served()
        let s = served.sandbox
        let r = try s.run("/usr/bin/dbus-send", ["--session", "--type=method_call", "--dest=\(Service.darkman)", Service.darkmanPath, "\(Self.properties).Set",
                                                 "string:\(Service.darkman)", "string:Mode", "variant:string:dark"])
        #expect(r.status == 0, "\(r)")
        try waitUntil("the write to be carried out") { try s.ctl("get").out == "dark\n" }
        #expect(served.daemon.isRunning)
    }

    /// darkman's object is answered only while its name is wanted: with darkman-dbus = false libdbus refuses calls to it.
    @Test func darkmansObjectIsAnsweredOnlyWhileItsNameIsWanted() throws {
        let s = try Sandbox()
        _ = try SandboxBus(s)
        try s.write("darkman-dbus = false\n", to: s.configFile)
        try s.startDaemon()
        try waitUntil("the own name to be owned") { try Service.status(s).hasPrefix("bus:         \(Service.name);") }
        let get = ["string:\(Service.darkman)", "string:Mode"]
        #expect(try Self.send(s, Service.name, Service.darkmanPath, "\(Self.properties).Get", get).hasPrefix("Error org.freedesktop.DBus.Error.UnknownMethod"))
        #expect(try Self.send(s, Service.name, Service.path, "\(Self.properties).Get", ["string:\(Service.name)", "string:Mode"]) == "variant       light")
    }
}
