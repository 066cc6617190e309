import AppearanceProtocol
import Testing

/// `schedule`'s `days`, as the daemon reads it from any client (appearancectl checks it first, others do not).
@Suite struct ScheduleRequestTests {
    static func line(_ params: String) -> [UInt8] { Array(#"{"jsonrpc":"2.0","id":1,"method":"schedule"\#(params)}"#.utf8) }

    @Test(arguments: [("", 7), (#","params":{"days":1}"#, 1), (#","params":{"days":31}"#, 31)])
    func daysAccepted(_ params: String, _ days: Int) throws {
        #expect(try Request.decode(Self.line(params)).call == .schedule(days: days))
    }

    @Test(arguments: ["0", "32", "\"7\"", "1.5", "-1", "true"])
    func daysRefused(_ value: String) {
        do {
            _ = try Request.decode(Self.line(#","params":{"days":\#(value)}"#))
            Issue.record("days \(value) accepted")
        } catch {
            #expect(error.error.code == ErrorCode.invalidParams.rawValue)
            #expect(error.error.message == #"schedule: invalid "days" \#(value), expected a whole number from 1 to 31"#, "\(error.error.message)")
        }
    }
}
