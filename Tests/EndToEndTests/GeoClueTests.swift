import Foundation
import Testing
import class TestSupport.Subprocess

/// `[schedule] location = "geoclue"`: the schedule's place from GeoClue on the system bus. The system bus is a
/// real dbus-daemon of the test's own (given to appearanced as DBUS_SYSTEM_BUS_ADDRESS); GeoClue is the
/// project's fake (Scripts/fake-geoclue.py), which can refuse, stay silent or be absent.
@Suite struct GeoClueTests {
    /// The fake GeoClue on `bus`, driven command by command (see the script's docstring).
    final class FakeGeoClue: StandIn {
        init(_ s: Sandbox, _ bus: SandboxBus, mode: String = "ok") async throws {
            try await super.init(s, script: "fake-geoclue.py", name: "fake GeoClue (\(mode))", arguments: [bus.address, "--mode", mode])
        }
    }

    /// A sandbox in UTC whose config asks GeoClue for the place (and has `extra` in [schedule]).
    static func sandbox(_ schedule: String = "location = \"geoclue\"\n") throws -> Sandbox {
        let s = try Sandbox()
        s.env["TZ"] = "UTC"
        try s.write("[schedule]\n" + schedule, to: s.configFile)
        return s
    }

    /// The same, with a system bus of its own.
    static func sandboxAndBus(_ schedule: String = "location = \"geoclue\"\n") throws -> (Sandbox, SandboxBus) {
        let s = try sandbox(schedule)
        return (s, try SandboxBus(s, system: true))
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// `schedule --json` and `status --json`'s `location` objects.
    static func location(_ s: Sandbox, from command: String = "status") throws -> [String: Any] {
        let r = try s.ctl(command, "--json")
        guard r.status == 0 else { throw TimedOut(description: "appearancectl \(command) --json failed: \(r)") }
        return try #require(try object(r.out)["location"] as? [String: Any], "no location in \(r.out)")
    }

    static func detail(_ s: Sandbox) throws -> String { (try location(s)["detail"] as? String) ?? "" }

    /// A fix arrives: the schedule is planned for the place (sunrise and sunset, not nothing), the place is
    /// shown with its source and age, kept rounded in location.json; a second fix far away plans again. The
    /// client the daemon made asked for city accuracy, its name and thresholds below which GeoClue keeps quiet.
    @Test func aFixPlansTheScheduleForThePlaceAndTheClientAsksForLittle() async throws {
        let (s, bus) = try Self.sandboxAndBus()
        let geoclue = try await FakeGeoClue(s, bus)
        try s.startDaemon()
        try waitUntil("the client to start; status: \((try? Self.detail(s)) ?? "")") { try Self.detail(s).contains("waiting for a first fix") }
        let waiting = try s.ctl("schedule")
        #expect(waiting.out.hasPrefix("no place yet: GeoClue: started (city accuracy), waiting for a first fix"), "\(waiting)")
        let props = try await geoclue.send("props")
        for expected in ["prop DesktopId appearanced", "prop RequestedAccuracyLevel 4", "prop DistanceThreshold 40000",
                         "prop TimeThreshold 14400", "prop Active 1"] {
            #expect(props.contains(expected), "\(props)")
        }

        let fixTime = Int(Date().timeIntervalSince1970) - 120
        try await geoclue.send("fix 52.5213 13.4049 \(fixTime)")
        try waitUntil("the place in schedule --json") { (try Self.location(s, from: "schedule")["source"] as? String) == "geoclue" }
        let place = try Self.location(s, from: "schedule")
        #expect(place["latitude"] as? Double == 52.52 && place["longitude"] as? Double == 13.4, "\(place)")
        #expect(place["time"] as? Int == fixTime && (place["age"] as? Int ?? 0) >= 120, "\(place)")
        let berlin = try Self.object(try s.ctl("schedule", "--json").out)
        let events = try #require(berlin["events"] as? [[String: Any]])
        #expect(!events.isEmpty && events.allSatisfy { ["sunrise", "sunset"].contains($0["cause"] as? String) }, "\(berlin)")
        #expect(try s.ctl("schedule").out.contains("place: 52.52, 13.40 (geoclue, fix 2 min old)"))
        #expect(try s.ctl("status").out.contains("; place 52.52, 13.40 (geoclue, fix 2 min old); GeoClue: following (city accuracy)"))
        let cached = try String(contentsOfFile: s.root + "/state/appearanced/location.json", encoding: .utf8)
        #expect(cached == "{\"latitude\":52.52,\"longitude\":13.40,\"time\":\(fixTime)}\n", "\(cached)")

        // 4.75 km away (GeoClue should not have said it; a source may): the same place, the fix confirmed.
        let nearTime = fixTime + 60
        try await geoclue.send("fix 52.55 13.45 \(nearTime)")
        try waitUntil("the fix to be confirmed") { (try Self.location(s, from: "schedule")["time"] as? Int) == nearTime }
        let near = try Self.object(try s.ctl("schedule", "--json").out)
        let nearPlace = try #require(near["location"] as? [String: Any])
        #expect(nearPlace["latitude"] as? Double == 52.52 && nearPlace["longitude"] as? Double == 13.4, "\(nearPlace)")
        #expect((near["events"] as? [[String: Any]])?.map { $0["time"] as? Int } == events.map { $0["time"] as? Int }, "\(near)")
        // Munich, 500 km away: a new place, a new plan.
        try await geoclue.send("fix 48.137 11.575")
        try waitUntil("Munich") { (try Self.location(s, from: "schedule")["latitude"] as? Double) == 48.14 }
        let munich = try #require(try Self.object(try s.ctl("schedule", "--json").out)["events"] as? [[String: Any]])
        #expect(munich.map { $0["time"] as? Int } != events.map { $0["time"] as? Int }, "\(munich)")

        // Sydney: the same days' sunrise and sunset are hours apart from Berlin's.
        try await geoclue.send("fix -33.8688 151.2093")
        try waitUntil("the new place") { (try Self.location(s, from: "schedule")["latitude"] as? Double) == -33.87 }
        let sydney = try #require(try Self.object(try s.ctl("schedule", "--json").out)["events"] as? [[String: Any]])
        #expect(sydney.map { $0["time"] as? Int } != events.map { $0["time"] as? Int }, "\(sydney)")
        #expect(try await geoclue.send("clients") == ["clients 1"])
    }

    /// A storm of fixes between far places (New York in the night, Tokyo in the afternoon): the mode does not
    /// follow each one (a new place plans again at most once in 5 minutes, the newest then), and the user's
    /// own history stays in the log.
    @Test func aStormOfFixesFlipsNothingAndEvictsNoHistory() async throws {
        let s = try Self.sandbox()
        s.env["APPEARANCED_TEST_CLOCK_FILE"] = s.root + "/clock-offset"
        let real = Int64(Date().timeIntervalSince1970)
        let then: Int64 = real / 86_400 * 86_400 + 5 * 3600 + 47 * 60  // today 05:47 UTC
        try s.write("\(then - real)\n", to: s.root + "/clock-offset")
        let bus = try SandboxBus(s, system: true)
        let geoclue = try await FakeGeoClue(s, bus)
        let d = try s.startDaemon()
        try waitUntil("the client to start") { try Self.detail(s).contains("waiting for a first fix") }
        try await geoclue.send("fix 40.71 -74.01")  // New York: 00:47, night
        try waitUntil("New York's night") { try s.ctl("get").out == "dark\n" }
        for mode in ["light", "dark", "system"] { #expect(try s.ctl("set", mode).status == 0) }
        let before = try s.ctl("log").out.split(separator: "\n")
        try await geoclue.send("storm 1000 35.68 139.69 40.71 -74.01")
        try await geoclue.send("fix -33.87 151.21")  // Sydney, last: once it is the place, every fix was read
        try waitUntil("the last fix to be read") { (try Self.location(s, from: "schedule")["latitude"] as? Double) == -33.87 }
        #expect(try s.ctl("get").out == "dark\n", "the storm flipped the mode")
        let after = try s.ctl("log").out.split(separator: "\n")
        #expect(after == before, "\(after.count) entries after the storm, \(before.count) before; the last: \(after.suffix(3))")
        let detail = try Self.detail(s)
        #expect(detail.contains("; the newest place is planned with at "), "\(detail)")
        try d.waitForStderr("GeoClue gave another new place within 5 min of the last: the schedule follows the newest at ")
    }

    /// GeoClue refuses for want of an agent: status names the cause and the geoclue.conf stanza that allows it;
    /// refused because the user turned location off: status says so. `get` answers either way.
    @Test(arguments: [("deny", "no location agent allows appearanced; without one (GNOME and KDE run theirs), start /usr/libexec/geoclue-2.0/demos/agent, or add to /etc/geoclue/geoclue.conf:\n[appearanced]\nallowed=true\nsystem=false\nusers=\nthen restart geoclue"),
                      ("disabled", "location services are off for this user; turn them on in the desktop's privacy settings")])
    func aRefusalSaysWhatAllowsIt(mode: String, says: String) async throws {
        let (s, bus) = try Self.sandboxAndBus("location = \"geoclue\"\nlight-at = \"07:00\"\n")
        let geoclue = try await FakeGeoClue(s, bus, mode: mode)
        try s.startDaemon()
        try waitUntil("the refusal in status; status: \((try? Self.detail(s)) ?? "")") { try Self.detail(s).contains("GeoClue: refused") }
        let detail = try Self.detail(s)
        #expect(detail.hasPrefix("GeoClue: refused (") && detail.hasSuffix(says), "\(detail)")
        #expect(try s.ctl("status").out.contains("schedule:    waiting for a place (none yet: GeoClue: refused ("))
        // light-at alone does not make a schedule until the sun gives the evening: no polar day is made up.
        #expect(try s.ctl("schedule").out.hasPrefix("no place yet: GeoClue: refused ("))
        #expect(try s.ctl("get").status == 0)
        #expect(try await geoclue.send("clients") == ["clients 1"])
    }

    /// No GeoClue on the bus: status says so; when it comes, the daemon asks it at once (NameOwnerChanged, no
    /// polling) and plans with its fix. No system bus at all: status says that.
    @Test func absentThenPresentAndNoBusAtAll() async throws {
        let (s, bus) = try Self.sandboxAndBus()
        try s.startDaemon()
        try waitUntil("status to say GeoClue is absent; status: \((try? Self.detail(s)) ?? "")") {
            try Self.detail(s).contains("GeoClue: not on the system bus (org.freedesktop.GeoClue2: org.freedesktop.DBus.Error.ServiceUnknown)")
        }
        #expect(try Self.location(s)["source"] is NSNull)
        let geoclue = try await FakeGeoClue(s, bus)
        try waitUntil("the daemon to start a client; status: \((try? Self.detail(s)) ?? "")") { try Self.detail(s).contains("waiting for a first fix") }
        try await geoclue.send("fix 48.85 2.35")
        try waitUntil("the place") { (try Self.location(s)["source"] as? String) == "geoclue" }

        let none = try Self.sandbox()
        none.env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(none.root)/no-system-bus"
        let lone = try none.startDaemon()
        try waitUntil("status to say there is no system bus; status: \((try? Self.detail(none)) ?? "")") {
            try Self.detail(none).hasPrefix("GeoClue: no system bus: ")
        }
        #expect(try none.ctl("get").status == 0)
        // Said once in the journal, a warning with its retry, however many retries follow.
        try waitUntil("a second retry; status: \((try? Self.detail(none)) ?? "")") {
            try Self.detail(none).hasSuffix("; trying again in 4 s")
        }
        let said = lone.stderr.split(separator: "\n").filter { $0.contains("GeoClue") && $0.contains("no system bus") }
        #expect(said.count == 1 && said[0].contains("warning") && said[0].hasSuffix("; trying again in 1 s"), "\(lone.stderr)")
    }

    /// A restart uses the last fix (source "cache") while GeoClue is silent; a location.json that cannot be
    /// used is kept aside and said, and the daemon runs on.
    @Test func aRestartUsesTheCachedFixAndABadCacheIsKeptAside() async throws {
        let s = try Self.sandbox()
        let cache = s.root + "/state/appearanced/location.json"
        do {
            let bus = try SandboxBus(s, system: true)
            defer { bus.close() }
            let geoclue = try await FakeGeoClue(s, bus)
            let d = try s.startDaemon()
            defer { d.stop(); _ = try? d.waitForExit() }  // both gone before the restart below
            try waitUntil("the client to start") { try Self.detail(s).contains("waiting for a first fix") }
            try await geoclue.send("fix 40.4168 -3.7038")
            try waitUntil("the place kept in \(cache)") { FileManager.default.fileExists(atPath: cache) }
        }
        let bus = try SandboxBus(s, system: true)
        let silent = try await FakeGeoClue(s, bus, mode: "silent")
        var d = try s.startDaemon()
        let place = try Self.location(s, from: "schedule")
        #expect(place["source"] as? String == "cache" && place["latitude"] as? Double == 40.42 && place["longitude"] as? Double == -3.7, "\(place)")
        #expect(try #require(try Self.object(try s.ctl("schedule", "--json").out)["events"] as? [Any]).count > 0)
        d.stop(); _ = try d.waitForExit()
        withExtendedLifetime(silent) {}

        try s.write("{\"latitude\": 400, \"longitude\": 0, \"time\": 1}\n", to: cache)
        d = try s.startDaemon()
        #expect(try Self.location(s)["source"] is NSNull)
        #expect(FileManager.default.fileExists(atPath: cache + ".corrupt"))
        try d.waitForStderr("location.json is not a valid location file: a coordinate or the time is out of range")
    }

    /// GeoClue never answers: the daemon answers `get` and `status` says what it is waiting for.
    @Test func aSilentGeoClueKeepsNothingWaiting() async throws {
        let (s, bus) = try Self.sandboxAndBus()
        let geoclue = try await FakeGeoClue(s, bus, mode: "silent")
        try s.startDaemon()
        try waitUntil("status to say it waits; status: \((try? Self.detail(s)) ?? "")") { try Self.detail(s) == "GeoClue: waiting for an answer to GetClient" }
        #expect(try s.ctl("get").out == "light\n")
        #expect(try s.ctl("schedule").out == "no place yet: GeoClue: waiting for an answer to GetClient\n")
        withExtendedLifetime(geoclue) {}
    }

    /// A typed place wins: GeoClue is not asked; both at once is a config error naming both keys.
    @Test func aTypedPlaceWinsAndBothAtOnceIsAnError() async throws {
        let (s, bus) = try Self.sandboxAndBus("latitude = 52.52\nlongitude = 13.4\n")
        let geoclue = try await FakeGeoClue(s, bus)
        try s.startDaemon()
        let place = try Self.location(s)
        #expect(place["source"] as? String == "config" && place["detail"] is NSNull, "\(place)")
        #expect(try await geoclue.send("clients") == ["clients 0"])

        try s.write("[schedule]\nlatitude = 52.52\nlongitude = 13.4\nlocation = \"geoclue\"\n", to: s.configFile)
        let check = try s.run(Bin.daemon, ["--check"])
        #expect(check.status == 78 && check.err.contains("\(s.configFile):4: schedule: location = \"geoclue\" and latitude/longitude both give the place"), "\(check)")
        try s.write("[schedule]\nlocation = \"gps\"\n", to: s.configFile)
        let bad = try s.run(Bin.daemon, ["--check"])
        #expect(bad.err.contains("\(s.configFile):2: schedule.location: unknown location \"gps\", expected \"geoclue\""), "\(bad)")
    }

    /// Debian's real GeoClue (geoclue-2.0) on the test's own system bus, with no location agent: it holds
    /// GetClient until an agent of the user's registers, so the daemon says it is waiting, and answers `get`.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/libexec/geoclue"), "needs geoclue-2.0 (`make deps-test`)"))
    func theRealGeoClueWithoutAnAgentKeepsUsWaiting() throws {
        let (s, bus) = try Self.sandboxAndBus()
        // -t 0: no exit when idle; nothing reaches the network (no client is ever started).
        let geoclue = try Child("/usr/libexec/geoclue", ["-t", "0"], env: s.env)
        defer { geoclue.stop(); _ = try? geoclue.waitForExit() }
        try waitUntil("GeoClue on the bus; stderr: \(geoclue.stderr)") {
            let r = try s.run("/usr/bin/busctl", ["--address=\(bus.address)", "list", "--no-pager"])
            return r.out.contains("org.freedesktop.GeoClue2")
        }
        try s.startDaemon()
        try waitUntil("status to say it waits; status: \((try? Self.detail(s)) ?? "")") {
            try Self.detail(s) == "GeoClue: waiting for an answer to GetClient"
        }
        #expect(try s.ctl("get").out == "light\n")
        #expect(geoclue.isRunning, "\(geoclue.stderr)")
    }

    /// The system bus goes away and comes back at the same address: status says so, the place stays, and the
    /// daemon asks the new GeoClue for a client and takes its fix. A reload from a typed place to GeoClue
    /// starts the client; back to a typed place, the typed one is shown again.
    @Test func followsTheSystemBusAcrossItsLossAndAReload() async throws {
        let s = try Self.sandbox("latitude = 1\nlongitude = 2\n")
        var bus = try SandboxBus(s, system: true)
        var geoclue: FakeGeoClue? = try await FakeGeoClue(s, bus)
        try s.startDaemon()
        #expect(try await geoclue!.send("clients") == ["clients 0"])
        try s.write("[schedule]\nlocation = \"geoclue\"\n", to: s.configFile)
        #expect(try s.ctl("reload").status == 0)
        try waitUntil("the client to start; status: \((try? Self.detail(s)) ?? "")") { try Self.detail(s).contains("waiting for a first fix") }
        try await geoclue!.send("fix 51.5 -0.12")
        try waitUntil("the place") { (try Self.location(s)["source"] as? String) == "geoclue" }

        geoclue = nil
        bus.close()
        try waitUntil("status to say the bus went away; status: \((try? Self.detail(s)) ?? "")") {
            try Self.detail(s).hasPrefix("GeoClue: the system bus went away; trying again in")
                || Self.detail(s).hasPrefix("GeoClue: no system bus: ")
        }
        #expect(try Self.location(s)["latitude"] as? Double == 51.5)
        bus = try SandboxBus(s, system: true)
        geoclue = try await FakeGeoClue(s, bus)
        try waitUntil("a client on the new bus; status: \((try? Self.detail(s)) ?? "")") { try Self.detail(s).contains("waiting for a first fix") }
        try await geoclue!.send("fix 35.68 139.69")
        try waitUntil("the new place") { (try Self.location(s)["latitude"] as? Double) == 35.68 }

        try s.write("[schedule]\nlatitude = 1\nlongitude = 2\n", to: s.configFile)
        #expect(try s.ctl("reload").status == 0)
        #expect(try Self.location(s)["source"] as? String == "config")
        withExtendedLifetime(geoclue) {}
    }
}
