import Foundation
import Testing

/// `integrations` with `wait` (protocol 8): the daemon holds its reply until the runs the change started have
/// ended, so `appearancectl integrations enable|disable` prints each run's result without asking again; at
/// `wait` seconds it answers with the list as it is; a bad `wait` is refused naming it; an older daemon that
/// refuses `wait` is asked again without it.
@Suite struct IntegrationWaitTests {
    /// An integration whose `apply` waits for a line on the fifo `go` (after touching `started`), so that a run
    /// ends only when the test says; `restore` ends at once. Each run is recorded.
    static func slow(_ s: Sandbox) throws -> (go: String, started: String, record: String) {
        let go = s.root + "/go", started = s.root + "/started", record = s.root + "/slow.record"
        #expect(mkfifo(go, 0o600) == 0)
        try HookTests.script(s, s.root + "/config/appearanced/integrations/slow", """
            case "$1" in
            available) echo "found: the slow one" ;;
            apply) touch \(started); read line < \(go); echo "apply $APPEARANCE" >> \(record) ;;
            restore) echo restore >> \(record) ;;
            esac
            """)
        return (go, started, record)
    }

    /// Lets one `apply` of `slow` end: opening the fifo waits for the run to read it.
    static func release(_ go: String) {
        let fd = open(go, O_WRONLY)
        _ = write(fd, "go\n", 3)
        close(fd)
    }

    @Test(.timeLimit(.minutes(2)))
    func enableWaitsForASlowRunAndPrintsItsResult() throws {
        let s = try Sandbox()
        let (go, started, record) = try Self.slow(s)
        try s.startDaemon()
        let ctl = try Child(Bin.ctl, ["integrations", "enable", "slow"], env: s.env)
        try waitUntil("the first run to start") { FileManager.default.fileExists(atPath: started) }
        // The run cannot end before the line below: appearancectl, told only when it ends, is still waiting.
        #expect(ctl.isRunning, "appearancectl ended before the run did: \(ctl.stdout) \(ctl.stderr)")
        Self.release(go)
        let status = try ctl.waitForEnd()
        #expect(status == 0 && ctl.stdout.hasPrefix("slow: enabled; apply light at ") && ctl.stdout.hasSuffix(": ok\n"), "\(ctl.stdout) \(ctl.stderr)")
        #expect(HookTests.lines(record) == ["apply light"])

        // Disabling waits for its restore the same way.
        let disabled = try s.ctl("integrations", "disable", "slow")
        #expect(disabled.status == 0 && disabled.out.hasPrefix("slow: disabled; restore at ") && disabled.out.hasSuffix(": ok\n"), "\(disabled)")
        #expect(HookTests.lines(record) == ["apply light", "restore"])
    }

    /// At `wait` seconds the daemon answers with the list as it is (the run not counted yet); a change whose
    /// integration has a run under way is answered once that run and its own have both ended.
    @Test(.timeLimit(.minutes(2)))
    func theDaemonAnswersAtTheWaitWithTheRunStillGoingAndWaitsForQueuedRuns() throws {
        let s = try Sandbox()
        let (go, started, record) = try Self.slow(s)
        try s.startDaemon()
        let client = try RawClient(s.socket)
        let early = try client.request(#"{"jsonrpc":"2.0","id":1,"method":"integrations","params":{"enable":["slow"],"wait":1}}"#)
        #expect(early.contains(#""name":"slow""#) && early.contains(#""enabled":true,"app":"slow","runs":0,"last":null"#), "\(early)")
        try waitUntil("the first run to start") { FileManager.default.fileExists(atPath: started) }

        // A disable while that apply runs: answered once the apply and then the restore have ended.
        try client.send(#"{"jsonrpc":"2.0","id":2,"method":"integrations","params":{"disable":["slow"],"wait":60}}"# + "\n")
        Self.release(go)
        let late = try #require(try client.line())
        #expect(late.contains(#""enabled":false,"app":"slow","runs":2,"last":{"#) && late.contains(#""action":"restore","mode":null,"result":"ok"}"#), "\(late)")
        #expect(HookTests.lines(record) == ["apply light", "restore"])
    }

    @Test(.timeLimit(.minutes(1)))
    func aBadWaitIsRefusedNamingIt() throws {
        let s = try Sandbox()
        _ = try Self.slow(s)
        try s.startDaemon()
        let client = try RawClient(s.socket)
        for (params, message) in [(#"{"enable":["slow"],"wait":0}"#, #"integrations: invalid \"wait\" 0, expected whole seconds from 1 to 3600"#),
                                  (#"{"enable":["slow"],"wait":"40"}"#, #"integrations: invalid \"wait\" \"40\", expected whole seconds from 1 to 3600"#),
                                  (#"{"wait":40}"#, #"integrations: \"wait\" is for the runs \"enable\" or \"disable\" start, and neither is given"#)] {
            let r = try client.request(#"{"jsonrpc":"2.0","id":1,"method":"integrations","params":\#(params)}"#)
            #expect(r == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"\#(message)"}}"#, "\(params)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.root + "/state/appearanced/integrations.json"), "a refused request changed nothing")
    }

    /// A daemon from before `wait` (protocol 7) refuses it and changes nothing: appearancectl asks again
    /// without it and says that this daemon does not tell when the run ends.
    @Test(.timeLimit(.minutes(1)))
    func anOlderDaemonIsAskedAgainWithoutWait() throws {
        let s = try Sandbox()
        let socket = s.root + "/old.sock"
        let old = try Child("/usr/bin/python3", ["-c", """
            import json, socket, sys
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(sys.argv[1])
            server.listen(4)
            print("listening", flush=True)
            slow = {"name": "slow", "path": None, "enabled": False, "app": "slow", "runs": 0, "last": None}
            while True:
                connection, _ = server.accept()
                for line in connection.makefile("r", encoding="utf-8"):
                    print(line.strip(), flush=True)
                    request = json.loads(line)
                    params = request.get("params") or {}
                    if "wait" in params:
                        answer = {"error": {"code": -32602, "message": 'integrations: unknown parameter "wait"'}}
                    else:
                        slow["enabled"] = slow["enabled"] or "slow" in params.get("enable", [])
                        answer = {"result": {"integrations": [slow], "run": True}}
                    connection.sendall((json.dumps({"jsonrpc": "2.0", "id": request["id"], **answer}) + "\\n").encode())
                connection.close()
            """, socket], env: s.env)
        defer { old.stop(SIGKILL) }
        _ = try old.waitForLines(1)
        let r = try s.run(Bin.ctl, ["--socket", socket, "integrations", "enable", "slow"])
        #expect(r.status == 0 && r.out == "slow: enabled; no result yet: this daemon does not say when runs end "
                + "(it is older than protocol 8; appearancectl integrations shows it later)\n", "\(r)")
        let asked = try old.waitForLines(4).dropFirst().map { String($0) }
        #expect(asked.count == 3 && asked[1].contains(#""wait":40"#) && asked[2].contains(#""enable":["slow"]"#) && !asked[2].contains("wait"), "\(asked)")
    }
}
