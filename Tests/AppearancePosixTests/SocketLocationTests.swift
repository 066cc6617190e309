import AppearancePosix
import Testing

struct SocketLocationTests {
    func env(_ d: [String: String]) -> (String) -> String? { { d[$0] } }

    @Test func precedence() {
        let e = env(["APPEARANCED_SOCKET": "/a/s", "XDG_RUNTIME_DIR": "/run/user/5"])
        #expect(SocketLocation.resolve(explicit: "/x/y", environment: e, uid: 5).path == "/x/y")
        #expect(SocketLocation.resolve(environment: e, uid: 5).path == "/a/s")
        let x = SocketLocation.resolve(environment: env(["XDG_RUNTIME_DIR": "/run/user/5"]), uid: 5)
        #expect(x == SocketLocation(path: "/run/user/5/appearanced/socket", ownsDirectory: true))
        #expect(x.modeFilePath == "/run/user/5/appearanced/mode")
    }

    @Test func withoutXDGRuntimeDir() {
        let run = SocketLocation.resolve(environment: env([:]), uid: 5, runUserDirectory: { _ in "/run/user/5" })
        #expect(run.path == "/run/user/5/appearanced/socket")
        #expect(run.warning != nil)
        let tmp = SocketLocation.resolve(environment: env([:]), uid: 5, runUserDirectory: { _ in nil })
        #expect(tmp.path == "/tmp/appearanced-5/socket")
        #expect(tmp.warning?.contains("/tmp/appearanced-5") == true)
    }
}
