import Foundation
import Testing

/// The one dispatcher of the objects appearanced serves (Sources/AppearanceBus/Served/ExportedObject.swift), through a
/// real dbus-daemon: each refusal has one name and a message naming the culprit, whichever object is asked.
@Suite struct ExportedObjectTests {
    typealias Face = BusFaceTests
    static let properties = "org.freedesktop.DBus.Properties"

    /// One call with dbus-send, which sends what gdbus would refuse to: its reply, or its error's name and message.
    static func send(_ s: Sandbox, _ dest: String, _ path: String, _ method: String, _ args: [String] = []) throws -> String {
        let r = try s.run("/usr/bin/dbus-send", ["--session", "--print-reply=literal", "--reply-timeout=20000", "--dest=\(dest)", path, method] + args)
        return (r.out + r.err).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func refusalsHaveOneVocabularyOnEveryObject() throws {
        let served = try Face.Served()
        let s = served.sandbox
        let (own, dm) = ((Face.name, Face.path), (Face.darkman, Face.darkmanPath))
        let cases: [((String, String), String, [String], String)] = [
            // The signature, checked before anything is decoded.
            (own, "\(Face.name).Toggle", ["string:x"], "Error org.freedesktop.DBus.Error.InvalidArgs: Toggle takes (a{sv}), not (s)"),
            (own, "\(Self.properties).Get", ["string:\(Face.name)"], "Error org.freedesktop.DBus.Error.InvalidArgs: Get takes (ss), not (s)"),
            (dm, "\(Self.properties).Set", ["string:\(Face.darkman)", "string:Mode"],
             "Error org.freedesktop.DBus.Error.InvalidArgs: Set takes (ssv), not (ss)"),
            // An interface, a method, a property the object does not have.
            (own, "org.example.Nope.Get", [], "Error org.freedesktop.DBus.Error.UnknownInterface: no interface org.example.Nope at \(Face.path)"),
            (dm, "\(Self.properties).GetAll", ["string:org.example.Nope"],
             "Error org.freedesktop.DBus.Error.UnknownInterface: no interface org.example.Nope at \(Face.darkmanPath)"),
            (own, "\(Face.name).Frobnicate", ["uint32:1"],
             "Error org.freedesktop.DBus.Error.UnknownMethod: no method \(Face.name).Frobnicate(u) at \(Face.path)"),
            (own, "\(Self.properties).Get", ["string:\(Face.name)", "string:Nope"],
             "Error org.freedesktop.DBus.Error.UnknownProperty: no property \(Face.name).Nope"),
            (dm, "\(Self.properties).Get", ["string:", "string:Nope"], "Error org.freedesktop.DBus.Error.UnknownProperty: no property Nope"),
            (dm, "\(Self.properties).Set", ["string:\(Face.name)", "string:Mode", "variant:string:dark"],
             "Error org.freedesktop.DBus.Error.UnknownProperty: no property \(Face.name).Mode"),
            // Set: a read-only property, a value of the wrong type, one past the bounds.
            (own, "\(Self.properties).Set", ["string:\(Face.name)", "string:Mode", "variant:string:dark"],
             "Error org.freedesktop.DBus.Error.PropertyReadOnly: the property \(Face.name).Mode is read-only"),
            (dm, "\(Self.properties).Set", ["string:", "string:Mode", "variant:uint32:1"],
             "Error org.freedesktop.DBus.Error.InvalidArgs: \(Face.darkman).Mode is of type s, not u"),
            (dm, "\(Self.properties).Set", ["string:\(Face.darkman)", "string:\(String(repeating: "M", count: 1025))", "variant:string:dark"],
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
        let served = try Face.Served()
        let s = served.sandbox
        let ownXML = try String(contentsOfFile: Face.repo + "/dbus/\(Face.name).xml", encoding: .utf8)
        let darkmanXML = try String(contentsOfFile: Face.repo + "/dbus/\(Face.darkman).xml", encoding: .utf8)
        #expect(try Face.introspect(s, Face.name, Face.path) == ownXML)
        #expect(try Face.introspect(s, Face.darkman, Face.darkmanPath) + "\n" == darkmanXML)

        let script = """
            import dbus, sys
            b = dbus.SessionBus()
            def call(dest, path, method, sig="", args=()):
                return b.call_blocking(dest, path, None, method, sig, args, timeout=20)
            xml = call("\(Face.name)", "\(Face.path)", "Introspect")
            state = call("\(Face.name)", "\(Face.path)", "Get", "a{sv}", [{}])
            print(xml == open(sys.argv[1]).read(), str(state["mode"]), str(call("\(Face.darkman)", "\(Face.darkmanPath)", "GetAll", "s", [""])["Mode"]))
            """
        let r = try s.run("/usr/bin/python3", ["-c", script, Face.repo + "/dbus/\(Face.name).xml"])
        #expect(r.status == 0 && r.out == "True light light\n", "\(r)")
        #expect(try Self.send(s, Face.name, Face.path, "org.freedesktop.DBus.Peer.Ping") == "")
    }

    /// A call that expects no reply is carried out all the same: darkman's Set from dbus-send without --print-reply.
    @Test func aCallThatExpectsNoReplyIsCarriedOut() throws {
        let served = try Face.Served()
        let s = served.sandbox
        let r = try s.run("/usr/bin/dbus-send", ["--session", "--type=method_call", "--dest=\(Face.darkman)", Face.darkmanPath, "\(Self.properties).Set",
                                                 "string:\(Face.darkman)", "string:Mode", "variant:string:dark"])
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
        try waitUntil("the own name to be owned") { try Face.status(s).hasPrefix("bus:         \(Face.name);") }
        let get = ["string:\(Face.darkman)", "string:Mode"]
        #expect(try Self.send(s, Face.name, Face.darkmanPath, "\(Self.properties).Get", get).hasPrefix("Error org.freedesktop.DBus.Error.UnknownMethod"))
        #expect(try Self.send(s, Face.name, Face.path, "\(Self.properties).Get", ["string:\(Face.name)", "string:Mode"]) == "variant       light")
    }
}
