import AppearanceProtocol
import Testing

/// `integrations`'s `wait` (protocol 8), as the daemon reads it from any client: whole seconds from 1 to 3600,
/// only with names to enable or disable; anything else is refused naming the value.
@Suite struct IntegrationsRequestTests {
    static func line(_ params: String) -> [UInt8] { Array(#"{"jsonrpc":"2.0","id":1,"method":"integrations","params":\#(params)}"#.utf8) }

    @Test(arguments: [(#"{"enable":["kitty"],"wait":1}"#, Call.integrations(enable: ["kitty"], disable: [], wait: 1)),
                      (#"{"disable":["vim"],"wait":3600}"#, .integrations(enable: [], disable: ["vim"], wait: 3600)),
                      (#"{"enable":["kitty"]}"#, .integrations(enable: ["kitty"], disable: [], wait: nil))])
    func waitAccepted(_ params: String, _ call: Call) throws {
        #expect(try Request.decode(Self.line(params)).call == call)
    }

    @Test(arguments: ["0", "3601", "\"40\"", "1.5", "-1", "true", "[40]"])
    func waitRefused(_ value: String) {
        do {
            _ = try Request.decode(Self.line(#"{"enable":["kitty"],"wait":\#(value)}"#))
            Issue.record("wait \(value) accepted")
        } catch {
            #expect(error.error.code == ErrorCode.invalidParams.rawValue)
            #expect(error.error.message == #"integrations: invalid "wait" \#(value), expected whole seconds from 1 to 3600"#, "\(error.error.message)")
        }
    }

    @Test func waitWithoutNamesIsRefused() {
        do {
            _ = try Request.decode(Self.line(#"{"wait":40}"#))
            Issue.record("wait without names accepted")
        } catch {
            #expect(error.error.code == ErrorCode.invalidParams.rawValue)
            #expect(error.error.message == #"integrations: "wait" is for the runs "enable" or "disable" start, and neither is given"#)
        }
    }

    @Test func aNullWaitIsATypeError() {
        do {
            _ = try Request.decode(Self.line(#"{"enable":["kitty"],"wait":null}"#))
            Issue.record("wait null accepted")
        } catch {
            #expect(error.error.message == #"integrations: "wait" is null, expected whole seconds from 1 to 3600 or no "wait" at all"#)
        }
    }

    /// What a client sends is what the daemon reads back.
    @Test func theRequestLineCarriesWait() throws {
        let call = Call.integrations(enable: ["kitty"], disable: ["vim"], wait: 40)
        let line = Request(id: .int(3), call: call).line
        #expect(String(decoding: line, as: UTF8.self)
                == #"{"jsonrpc":"2.0","id":3,"method":"integrations","params":{"enable":["kitty"],"disable":["vim"],"wait":40}}"# + "\n")
        #expect(try Request.decode(Array(line.dropLast())).call == call)
    }
}
