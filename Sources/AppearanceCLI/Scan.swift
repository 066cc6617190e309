/// One pass over a command line, for appearanced and appearancectl alike: `--name VALUE` and `--name=VALUE`
/// are the same, a flag takes no value, `--` ends the options.

enum Scan {
    enum Token {
        /// An option from the table, with its value (nil for a flag) and how it was written (`--name=` or `--name`).
        case option(OptionSpec, value: String?, written: String)
        case operand(String)
        /// An option whose value is the rest of the line (`watch --exec CMD ARGS...`).
        case rest(OptionSpec, [String])
    }

    /// `spec` finds an option by any of its names; `takesRest` says which take the rest of the line.
    static func tokens(_ arguments: [String], spec: (String) -> OptionSpec?, takesRest: (OptionSpec) -> Bool = { _ in false })
        throws(UsageError) -> [Token] {
        var tokens: [Token] = []
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if arg == "--" {
                tokens += arguments[i...].map(Token.operand)
                break
            }
            guard arg.hasPrefix("-"), arg.count > 1 else {
                tokens.append(.operand(arg))
                continue
            }
            let equals = arg.hasPrefix("--") ? arg.firstIndex(of: "=") : nil
            let name = equals.map { String(arg[..<$0]) } ?? arg
            guard let s = spec(name) else { throw UsageError("unknown option \"\(shown(name))\"") }
            guard let placeholder = s.value else {
                if equals != nil { throw UsageError("option \(s.name) takes no value") }
                tokens.append(.option(s, value: nil, written: s.name))
                continue
            }
            if takesRest(s) {
                guard i < arguments.count || equals != nil else { throw UsageError("option \(s.name) needs a command") }
                tokens.append(.rest(s, (equals.map { [String(arg[arg.index(after: $0)...])] } ?? []) + arguments[i...]))
                break
            }
            let value: String
            if let equals {
                value = String(arg[arg.index(after: equals)...])
            } else {
                guard i < arguments.count else { throw UsageError("option \(name) needs a value (\(placeholder))") }
                value = arguments[i]
                i += 1
            }
            tokens.append(.option(s, value: value, written: equals == nil ? s.name : "\(s.name)="))
        }
        return tokens
    }
}
