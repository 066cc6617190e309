import AppearanceProtocol
import Testing

/// A request line crammed with members is refused as soon as the reader passes the limit.
@Suite struct MemberLimitTests {
    static func line(params n: Int) -> [UInt8] {
        let members = (0..<n).map { #""p\#($0)":0"# }.joined(separator: ",")
        return Array(#"{"jsonrpc":"2.0","id":3,"method":"get","params":{\#(members)}}"#.utf8)
    }

    @Test func thousandsOfParamsAreAnInvalidRequestNotAWholeParse() {
        do {
            _ = try Request.decode(Self.line(params: 5_900))
            Issue.record("accepted")
        } catch {
            #expect(error.error.code == ErrorCode.invalidRequest.rawValue)
            #expect(error.error.message.hasPrefix("a request and its params have at most 16 members (refused at byte "), "\(error.error.message)")
            // Refused at the 17th member of params, not at the end of the line.
            #expect(error.error.message.contains("byte 1") && !error.error.message.contains("byte 6"), "\(error.error.message)")
        }
    }

    @Test func aFewUnknownParamsStillNameTheFirst() {
        do {
            _ = try Request.decode(Self.line(params: 16))
            Issue.record("accepted")
        } catch {
            #expect(error.error.code == ErrorCode.invalidParams.rawValue && error.error.message == #"get: unknown parameter "p0""#)
            #expect(error.id == .int(3))
        }
    }

    @Test func repliesAreReadWithoutTheLimit() throws {
        let members = (0..<5_000).map { ##""t\##($0)":"#fff""## }.joined(separator: ",")
        let v = try JSON.parse(Array("{\(members)}".utf8))
        guard case .object(let m) = v else { Issue.record("not an object"); return }
        #expect(m.count == 5_000)
    }
}
