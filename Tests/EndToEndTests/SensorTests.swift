import Foundation
import Testing
import TestSupport
import class TestSupport.PrivateBus

/// The automatic layer's sensors, against stand-ins with the real names, paths, interfaces and signals on a
/// private system bus (Scripts/fake-sensors.py): iio-sensor-proxy's ambient light sensor, UPower's OnBattery
/// and logind's session (IdleHint, LockedHint, PrepareForSleep), with the built daemon and appearancectl.
@Suite(.serialized) struct SensorTests {
    final class FakeService: StandIn {
        init(_ s: Sandbox, _ bus: SandboxBus, _ service: String, _ options: [String] = []) async throws {
            try await super.init(s, script: "fake-sensors.py", name: "fake \(service)", arguments: [bus.address, "--service", service] + options)
        }
    }

    static func sandbox(_ config: String) throws -> Sandbox {
        let s = try Sandbox()
        s.env["TZ"] = "UTC"
        s.env["XDG_SESSION_ID"] = nil
        try s.write(config, to: s.configFile)
        return s
    }

    /// The same, with a system bus of its own.
    static func sandboxAndBus(_ config: String) throws -> (Sandbox, SandboxBus) {
        let s = try sandbox(config)
        return (s, try SandboxBus(s, system: true))
    }

    static func status(_ s: Sandbox) throws -> [String: Any] {
        let r = try s.ctl("status", "--json")
        guard r.status == 0 else { throw TimedOut(description: "status --json failed: \(r)") }
        return try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], "\(r.out)")
    }

    static func source(_ s: Sandbox) throws -> String { (try status(s)["source"] as? String) ?? "" }
    static func mode(_ s: Sandbox) throws -> String { (try status(s)["mode"] as? String) ?? "" }
    static func field(_ s: Sandbox, _ name: String) throws -> String { (try status(s)[name] as? String) ?? "" }

    static func claims(_ light: FakeService) async throws -> String {
        try await light.send("claims").first { $0.hasPrefix("claims ") } ?? ""
    }

    /// Waits (with a deadline) until the proxy stand-in counts `n` claims of the light.
    static func waitForClaims(_ light: FakeService, _ n: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        var last = ""
        while ContinuousClock.now < deadline {
            last = try await claims(light)
            if last == "claims \(n)" { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TimedOut(description: "waiting for \"claims \(n)\"; last: \(last)")
    }

    static let lightConfig = "[light-sensor]\ndark-below = 40\nlight-above = 80\ndelay = \"1s\"\n"

    /// The first level decides at once; a new side decides once it has lasted the delay; the band between the
    /// thresholds leaves it to the default; `log` gives the cause; status names what decides.
    @Test func theLightInTheRoomDecides() async throws {
        let (s, bus) = try Self.sandboxAndBus(Self.lightConfig)
        let light = try await FakeService(s, bus, "light")
        try await light.send("light 12")
        try s.startDaemon()
        try waitUntil("dark from the sensor; status: \((try? Self.status(s)) ?? [:])", timeout: 20) { try Self.source(s) == "light-sensor" && Self.mode(s) == "dark" }
        #expect(try Self.field(s, "automatic").hasPrefix("the light sensor decides (dark)"))
        #expect(try Self.field(s, "lightSensor") == "12 lux: dark (below 40)")
        #expect(try await Self.claims(light) == "claims 1")
        try await light.send("light 500")
        try waitUntil("light after the delay", timeout: 20) { try Self.mode(s) == "light" && Self.source(s) == "light-sensor" }
        let log = try s.ctl("log").out
        #expect(log.contains("light sensor: 500 lux for 1 s"), "\(log)")
        try await light.send("light 60")
        try waitUntil("the band: the default decides", timeout: 20) { try Self.source(s) == "default" }
        #expect(try Self.field(s, "lightSensor").hasPrefix("60 lux: between 40 and 80, so it does not decide"))
        #expect(try s.ctl("status").out.contains("light sensor: 60 lux: between 40 and 80"))
    }

    /// A flicker across a threshold shorter than the delay changes nothing.
    @Test func aFlickerChangesNothing() async throws {
        let (s, bus) = try Self.sandboxAndBus("[light-sensor]\ndelay = \"1h\"\n")
        let light = try await FakeService(s, bus, "light")
        try await light.send("light 5")
        try s.startDaemon()
        try waitUntil("dark", timeout: 20) { try Self.mode(s) == "dark" }
        try await light.send("light 900")
        try waitUntil("the change waiting out its delay", timeout: 20) { try Self.field(s, "lightSensor").contains("light in ") }
        try await light.send("light 5")
        try waitUntil("the wait over", timeout: 20) { try Self.field(s, "lightSensor") == "5 lux: dark (below 40)" }
        #expect(try Self.mode(s) == "dark")
        #expect(!(try s.ctl("log").out.contains("light sensor: 900")))
    }

    /// The sensor is claimed only while it can decide: an override releases it, `set system` claims it again;
    /// the proxy gone and back: the default, then the sensor at once.
    @Test func theSensorIsClaimedOnlyWhileItCanDecideAndFollowedAcrossLoss() async throws {
        let (s, bus) = try Self.sandboxAndBus(Self.lightConfig)
        let light = try await FakeService(s, bus, "light")
        try await light.send("light 10")
        try s.startDaemon()
        try waitUntil("dark", timeout: 20) { try Self.mode(s) == "dark" }
        #expect(try s.ctl("set", "light").status == 0)
        try await Self.waitForClaims(light, 0)
        #expect(try Self.field(s, "lightSensor") == "released: your override hides the automatic layer")
        #expect(try s.ctl("set", "system").status == 0)
        try await Self.waitForClaims(light, 1)
        try waitUntil("dark again", timeout: 20) { try Self.mode(s) == "dark" && Self.source(s) == "light-sensor" }

        light.stop()
        try waitUntil("the sensor gone", timeout: 20) { try Self.source(s) == "default" }
        #expect(try Self.field(s, "lightSensor") == "net.hadess.SensorProxy left the system bus")
        let back = try await FakeService(s, bus, "light")
        try await back.send("light 3")
        try waitUntil("the sensor back, deciding at once", timeout: 20) { try Self.source(s) == "light-sensor" && Self.mode(s) == "dark" }
        try await back.send("has-light no")
        try waitUntil("no sensor", timeout: 20) { try Self.field(s, "lightSensor").hasPrefix("no ambient light sensor") }
    }

    /// Values that are no level are refused with a message naming them; a vendor unit is shown as such.
    @Test func badValuesAreRefusedAndAVendorUnitIsRaw() async throws {
        let (s, bus) = try Self.sandboxAndBus(Self.lightConfig + "[power]\non-battery = \"dark\"\n")
        let light = try await FakeService(s, bus, "light")
        let power = try await FakeService(s, bus, "power")
        try await light.send("light 200")
        let d = try s.startDaemon()
        try waitUntil("light", timeout: 20) { try Self.source(s) == "light-sensor" }
        try await light.send("raw LightLevel d nan")
        try waitUntil("nan refused", timeout: 20) { try Self.field(s, "lightSensor").hasPrefix("refused: the sensor proxy's LightLevel is nan") }
        try await light.send("raw LightLevel d -5")
        try waitUntil("a negative level refused", timeout: 20) { try Self.field(s, "lightSensor").hasPrefix("refused: the sensor proxy's LightLevel is -5.0") }
        try await light.send("raw LightLevel s abc")
        try waitUntil("a string refused; \((try? Self.field(s, "lightSensor")) ?? "")", timeout: 20) {
            let said = try Self.field(s, "lightSensor")
            return said.hasPrefix("refused: the sensor proxy's LightLevel is 's' ") && said.contains("abc") && said.hasSuffix("not a double")
        }
        try await power.send("raw OnBattery s yes")
        try waitUntil("a string OnBattery refused; \((try? Self.field(s, "power")) ?? "")", timeout: 20) {
            try Self.field(s, "power").hasPrefix("refused: UPower's OnBattery is 's' ")
        }
        #expect(d.stderr.contains("light sensor: the sensor proxy's LightLevel is nan"), "\(d.stderr)")
        #expect(try Self.mode(s) == "light", "\((try? Self.status(s)) ?? [:])")
        try await light.send("unit vendor")
        try await light.send("light 7")
        try waitUntil("a vendor level", timeout: 20) { try Self.field(s, "lightSensor") == "7 vendor: dark (below 40)" }
    }

    /// On battery the power rule wins over the sensor (which is released), at once on plug and unplug.
    @Test func onBatteryThePowerRuleDecides() async throws {
        let (s, bus) = try Self.sandboxAndBus(Self.lightConfig + "[power]\non-battery = \"dark\"\n")
        let light = try await FakeService(s, bus, "light")
        let power = try await FakeService(s, bus, "power")
        try await light.send("light 900")
        try s.startDaemon()
        try waitUntil("light from the sensor", timeout: 20) { try Self.source(s) == "light-sensor" && Self.mode(s) == "light" }
        #expect(try Self.field(s, "power") == "on AC")
        try await power.send("battery yes")
        try waitUntil("dark on battery", timeout: 20) { try Self.source(s) == "power" && Self.mode(s) == "dark" }
        #expect(try Self.field(s, "automatic").hasPrefix("the power rule decides (on battery: dark)"))
        try await Self.waitForClaims(light, 0)
        try await power.send("battery no")
        try waitUntil("the sensor again", timeout: 20) { try Self.source(s) == "light-sensor" && Self.mode(s) == "light" }
        #expect(try s.ctl("log").out.contains("power: on battery"))
    }

    /// With wait-for-idle, an automatic change waits while the session is active and comes on idle, on lock and
    /// at resume; at start it is applied at once, and the user's own changes never wait.
    @Test func automaticChangesWaitForIdle() async throws {
        let (s, bus) = try Self.sandboxAndBus("[power]\non-battery = \"dark\"\n[automatic]\nwait-for-idle = true\n")
        let power = try await FakeService(s, bus, "power")
        let login = try await FakeService(s, bus, "login")
        try await power.send("battery yes")
        try s.startDaemon()
        try waitUntil("dark at once at start", timeout: 20) { try Self.mode(s) == "dark" && Self.field(s, "idle") == "active" }
        try await power.send("battery no")
        try waitUntil("the change held", timeout: 20) { try Self.field(s, "automatic").hasSuffix("waiting for idle") }
        #expect(try Self.mode(s) == "dark")
        let schedule = try s.ctl("schedule").out
        #expect(schedule.hasPrefix("waiting for idle: light since ") && schedule.contains("(power: on AC)"), "\(schedule)")
        try await login.send("idle yes")
        try waitUntil("applied on idle", timeout: 20) { try Self.mode(s) == "light" }
        #expect(try s.ctl("log").out.contains("(held until the session is idle)"))
        try await login.send("idle no")
        try waitUntil("active", timeout: 20) { try Self.field(s, "idle") == "active" }
        try await power.send("battery yes")
        try waitUntil("held again", timeout: 20) { try Self.field(s, "automatic").hasSuffix("waiting for idle") }
        try await login.send("locked yes")
        try waitUntil("applied on lock", timeout: 20) { try Self.mode(s) == "dark" }
        try await login.send("locked no")
        try waitUntil("active", timeout: 20) { try Self.field(s, "idle") == "active" }
        try await power.send("battery no")
        try waitUntil("held", timeout: 20) { try Self.field(s, "automatic").hasSuffix("waiting for idle") }
        try await login.send("resume")
        try waitUntil("applied at resume", timeout: 20) { try Self.mode(s) == "light" }
        // The user's word is never held.
        #expect(try s.ctl("set", "dark").out.contains("dark"))
        #expect(try Self.mode(s) == "dark")
    }

    /// A session whose hints are not booleans is refused by name; nothing waits then. The Lock signal releases a
    /// held change as LockedHint does.
    @Test func aSessionsBadHintIsRefusedAndLockReleases() async throws {
        let (s, bus) = try Self.sandboxAndBus("[power]\non-battery = \"dark\"\n[automatic]\nwait-for-idle = true\n")
        let power = try await FakeService(s, bus, "power")
        let login = try await FakeService(s, bus, "login")
        let d = try s.startDaemon()
        try waitUntil("active", timeout: 20) { try Self.field(s, "idle") == "active" }
        try await power.send("battery yes")
        try waitUntil("held", timeout: 20) { try Self.field(s, "automatic").hasSuffix("waiting for idle") }
        try await login.send("lock")
        try waitUntil("applied on Lock", timeout: 20) { try Self.mode(s) == "dark" }
        try await login.send("raw IdleHint s yes")
        try waitUntil("the hint refused", timeout: 20) {
            try Self.field(s, "idle").hasPrefix("no session: logind's IdleHint and LockedHint of /org/freedesktop/login1/session/")
        }
        #expect(d.stderr.contains("session: logind's IdleHint and LockedHint"), "\(d.stderr)")
        try await power.send("battery no")
        try waitUntil("applied at once: no session to wait for", timeout: 20) { try Self.mode(s) == "light" }
    }

    /// A first level is how the room is, not a change: it decides at once even while the session is in use
    /// (the sensor coming after the session), and the log says so without a delay.
    @Test func aFirstLevelIsNotHeldForIdle() async throws {
        let (s, bus) = try Self.sandboxAndBus(Self.lightConfig + "[automatic]\nwait-for-idle = true\n")
        let login = try await FakeService(s, bus, "login")
        try s.startDaemon()
        try waitUntil("active", timeout: 20) { try Self.field(s, "idle") == "active" && Self.mode(s) == "light" }
        let light = try await FakeService(s, bus, "light")
        try await light.send("light 12")
        try waitUntil("dark at once", timeout: 20) { try Self.mode(s) == "dark" && Self.source(s) == "light-sensor" }
        let log = try s.ctl("log").out
        #expect(log.contains("light sensor: 12 lux") && !log.contains("light sensor: 12 lux for"), "\(log)")
        // A later change is held while the session is in use.
        try await light.send("light 500")
        try waitUntil("held", timeout: 20) { try Self.field(s, "automatic").hasSuffix("waiting for idle") }
        withExtendedLifetime(login) {}
    }

    /// A reload with new thresholds judges the last level at once, and a new power rule applies on battery at once.
    @Test func aReloadJudgesTheLastLevelAndTheRuleAgain() async throws {
        let (s, bus) = try Self.sandboxAndBus(Self.lightConfig + "[power]\non-battery = \"dark\"\n")
        let light = try await FakeService(s, bus, "light")
        let power = try await FakeService(s, bus, "power")
        try await light.send("light 60")
        try s.startDaemon()
        try waitUntil("the band: the default", timeout: 20) { try Self.field(s, "lightSensor").hasPrefix("60 lux: between") }
        #expect(try Self.source(s) == "default")
        try s.write("[light-sensor]\ndark-below = 100\nlight-above = 200\n[power]\non-battery = \"dark\"\n", to: s.configFile)
        #expect(try s.ctl("reload").status == 0)
        try waitUntil("dark by the new thresholds", timeout: 20) { try Self.source(s) == "light-sensor" && Self.mode(s) == "dark" }
        #expect(try s.ctl("log").out.contains("light sensor: 60 lux, new thresholds (config)"))
        try await power.send("battery yes")
        try waitUntil("the power rule", timeout: 20) { try Self.source(s) == "power" && Self.mode(s) == "dark" }
        try s.write("[light-sensor]\ndark-below = 100\nlight-above = 200\n[power]\non-battery = \"light\"\n", to: s.configFile)
        #expect(try s.ctl("reload").status == 0)
        try waitUntil("light by the new rule", timeout: 20) { try Self.source(s) == "power" && Self.mode(s) == "light" }
    }

    /// Without a session in logind nothing waits, and status says so.
    @Test func withoutASessionNothingWaits() async throws {
        let (s, bus) = try Self.sandboxAndBus("[power]\non-battery = \"dark\"\n[automatic]\nwait-for-idle = true\n")
        let power = try await FakeService(s, bus, "power")
        let login = try await FakeService(s, bus, "login", ["--no-display"])
        try s.startDaemon()
        try waitUntil("no session said", timeout: 20) { try Self.field(s, "idle").hasPrefix("no session: no graphical session for this user") }
        try await power.send("battery yes")
        try waitUntil("applied at once", timeout: 20) { try Self.mode(s) == "dark" }
        withExtendedLifetime(login) {}
    }

    /// Context switches of every thread of `pid` (voluntary and not): a thread that wakes adds to them.
    static func switches(_ pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return sum + text.split(separator: "\n").filter { $0.hasSuffix("ctxt_switches") || $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }.reduce(0, +)
        }
    }

    /// With the light sensor, the power rule and the wait for idle configured and nothing changing, the daemon
    /// sleeps: no thread of it wakes in 60 s (once it has settled). A session
    /// bus of its own, as in a session: without one, the sentry's reconnect back-off is a wake-up every 30 s.
    @Test func nothingChangingWakesNothing() async throws {
        let s = try Self.sandbox(Self.lightConfig + "[power]\non-battery = \"dark\"\n[automatic]\nwait-for-idle = true\n")
        let dir = try TemporaryDirectory()
        let session = try await PrivateBus(in: dir)
        s.env["DBUS_SESSION_BUS_ADDRESS"] = session.address
        let bus = try SandboxBus(s, system: true)
        let light = try await FakeService(s, bus, "light")
        let power = try await FakeService(s, bus, "power")
        let login = try await FakeService(s, bus, "login")
        try await light.send("light 12")
        let d = try s.startDaemon()
        try waitUntil("all three followed", timeout: 20) {
            try Self.source(s) == "light-sensor" && Self.field(s, "power") == "on AC" && Self.field(s, "idle") == "active"
        }
        // Settled: no switch for 30 s in a row (at most 120 s of waiting): Dispatch's idle workers end after 5 s, and a
        // bus connection's deadline timer fires once, 25 s after its last call (BusConnection.armExpiry).
        var last = Self.switches(d.pid), quietSince = ContinuousClock.now
        let settleBy = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now - quietSince < .seconds(30) && ContinuousClock.now < settleBy {
            try await Task.sleep(for: .milliseconds(250))
            let now = Self.switches(d.pid)
            if now != last { (last, quietSince) = (now, ContinuousClock.now) }
        }
        let before = Self.switches(d.pid)
        try await Task.sleep(for: .seconds(60))
        #expect(Self.switches(d.pid) - before == 0)
        withExtendedLifetime((light, power, login, session)) {}
    }

    /// The stand-ins serve what Debian's real services declare: iio-sensor-proxy's interface (a GResource inside
    /// the program) and UPower's (its interface file), member for member, with the same signatures and access.
    @Test(arguments: [
        ("light", "net.hadess.SensorProxy", "/net/hadess/SensorProxy", "net.hadess.SensorProxy",
         "/usr/sbin/iio-sensor-proxy:/net/hadess/SensorProxy/net.hadess.SensorProxy.xml"),
        ("power", "org.freedesktop.UPower", "/org/freedesktop/UPower", "org.freedesktop.UPower",
         "/usr/share/dbus-1/interfaces/org.freedesktop.UPower.xml"),
    ])
    func theStandInsServeTheRealInterfaces(_ service: String, _ name: String, _ path: String, _ interface: String,
                                           _ real: String) async throws {
        let (s, bus) = try Self.sandboxAndBus("")
        let standIn = try await FakeService(s, bus, service)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/interface-members.py").path
        let declared = try s.run("/usr/bin/python3", [script, interface, real])
        let served = try s.run("/usr/bin/python3", [script, interface, bus.address, name, path])
        #expect(declared.status == 0 && !declared.out.isEmpty, "\(declared)")
        #expect(served.status == 0 && served.out == declared.out, "served:\n\(served.out)\(served.err)\ndeclared:\n\(declared.out)")
        withExtendedLifetime(standIn) {}
    }

    /// The config's mistakes name the key and the value.
    @Test(arguments: [
        ("[light-sensor]\ndark-below = 90\nlight-above = 80\n", "light-sensor: light-above (80) must be above dark-below (90)"),
        ("[light-sensor]\ndark-below = -1\n", "light-sensor.dark-below: expected a level in lux from 0 to 200000, got -1"),
        ("[light-sensor]\ndelay = \"soon\"\n", "light-sensor.delay: invalid duration \"soon\""),
        ("[light-sensor]\nlux = 3\n", "light-sensor.lux: unknown key (known keys: dark-below, light-above, delay)"),
        ("[power]\non-battery = \"dim\"\n", "power.on-battery: expected \"dark\" or \"light\", got \"dim\""),
        ("[automatic]\nwait-for-idle = \"yes\"\n", "automatic.wait-for-idle: expected true or false, got \"yes\""),
    ])
    func configMistakes(_ config: String, _ message: String) throws {
        let s = try Self.sandbox(config)
        let check = try s.run(Bin.daemon, ["--check"])
        #expect(check.status == 78 && check.err.contains(message), "\(check)")
    }
}
