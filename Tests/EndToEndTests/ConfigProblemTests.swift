import Foundation
import Testing

/// A config with a mistake does not stop the daemon, and the scripts that only ever run `get` learn of it too:
/// `get --json` carries `configProblem` (file, line, problem) while the file on disk is not in force, and
/// plain `get` says it on stderr beside the mode.
@Suite struct ConfigProblemTests {
    @Test(.timeLimit(.minutes(1)))
    func getCarriesTheProblemUntilTheConfigIsFixed() throws {
        let s = try Sandbox()
        try s.write("default-mode = \"dark\"\nhooks = maybe\n", to: s.configFile)
        try s.startDaemon()
        let json = try s.ctl("get", "--json")
        #expect(json.status == 0, "\(json)")
        #expect(json.out.contains(#""configProblem":"\#(s.configFile):2:"#) && json.out.contains("using the defaults until it is fixed"), "\(json.out)")
        let plain = try s.ctl("get")
        #expect(plain.status == 0 && plain.out == "light\n", "\(plain)")  // the defaults are in force
        #expect(plain.err.hasPrefix("appearancectl: appearanced is not using its config: \(s.configFile):2:"), "\(plain.err)")
        // Fixed and reloaded: the field and the warning are gone, the file is in force.
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        #expect(try s.ctl("reload").status == 0)
        let fixed = try s.ctl("get", "--json")
        #expect(!fixed.out.contains("configProblem") && fixed.out.contains(#""mode":"dark""#), "\(fixed.out)")
        let quiet = try s.ctl("get")
        #expect(quiet.out == "dark\n" && quiet.err == "", "\(quiet)")
        // A reload that refuses the file: the previous config stays in force, and get says the file is not.
        try s.write("default-mode = \"blue\"\n", to: s.configFile)
        #expect(try s.ctl("reload").status == 65)
        let refused = try s.ctl("get", "--json")
        #expect(refused.out.contains(#""mode":"dark""#) && refused.out.contains("keeping the previous configuration"), "\(refused.out)")
    }
}
