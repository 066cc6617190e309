// The completion scripts for bash, zsh and fish, generated from `Table` (`make completions` writes them);
// palette tokens and app ids come from the running daemon (`appearancectl completions list WHAT`).

public func completionScript(for shell: Shell) -> String {
    switch shell {
    case .bash: bashCompletion()
    case .zsh: zshCompletion()
    case .fish: fishCompletion()
    }
}

private func header(_ shell: Shell) -> String {
    "# \(shell.rawValue) completion for appearancectl, generated from its option table (Sources/AppearanceCLI/Table.swift)\n"
        + "# by `appearancectl completions \(shell.rawValue)`: `make completions` writes it, do not edit it by hand.\n"
}

/// The operands after a first one (`integrations enable NAME...`), by scope (`integrations enable`).
private var thenScopes: [(scope: String, operands: Completion)] {
    Table.commands.flatMap { c in c.then.map { ("\(c.name) \($0.after)", $0.operands) } }
}

// MARK: bash

private func bashWords(_ c: Completion) -> String? {
    switch c {
    case .nothing: return ""
    case .files: return #"COMPREPLY=($(compgen -f -- "$cur"))"#
    case .plists: return #"COMPREPLY=($(compgen -f -X '!*.plist' -- "$cur") $(compgen -d -- "$cur"))"#
    case .words(let w): return "COMPREPLY=($(compgen -W '\(w.joined(separator: " "))' -- \"$cur\"))"
    case .command: return nil
    case .daemon(let what): return "COMPREPLY=($(compgen -W \"$(_appearancectl_list \(what.rawValue))\" -- \"$cur\"))"
    }
}

private func bashCompletion() -> String {
    // Every option name that takes a value, long and short, once.
    var seen: Set<String> = []
    let valueNames = Table.options.filter { $0.value != nil && $0.completion != .command }.flatMap(\.names).filter { seen.insert($0).inserted }
    var s = header(.bash)
    s += """
        # Words from the running daemon (nothing when none answers within appearancectl's 0.5 s), on the
        # line's own --socket if it names one.
        _appearancectl_list() {
            appearancectl ${socket:+--socket "$socket"} completions list "$1" </dev/null 2>/dev/null
        }
        _appearancectl() {
            local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} word command= sub= scope i socket=
            # --name=VALUE: bash splits the word at "=".
            if [[ $cur == = ]]; then cur=; fi
            if [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi
            # After --exec, the rest of the line is a command of its own.
            for ((i = 1; i < COMP_CWORD; i++)); do
                if [[ ${COMP_WORDS[i]} == --exec ]]; then
                    if ((COMP_CWORD == i + 1)); then COMPREPLY=($(compgen -c -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
                    return
                fi
            done
            for ((i = 1; i < COMP_CWORD; i++)); do
                word=${COMP_WORDS[i]}
                case $word in
                    \(valueNames.joined(separator: "|")))
                        ((i++)); [[ ${COMP_WORDS[i]} == = ]] && ((i++))
                        [[ $word == --socket ]] && socket=${COMP_WORDS[i]}
                        continue ;;
                esac
                if [[ $word != -* && $word != = ]]; then
                    if [[ -z $command ]]; then command=$word; elif [[ -z $sub ]]; then sub=$word; fi
                fi
            done
            scope=$command

        """
    for c in Table.commands where !c.subcommands.isEmpty {
        for sub in c.subcommands {
            s += "    [[ $command == \(c.name) && $sub == \(sub.name) ]] && scope='\(c.name) \(sub.name)'\n"
        }
    }
    s += "    case \"$scope:$prev\" in\n"
    for o in Table.options where o.value != nil {
        guard let action = bashWords(o.completion) else { continue }
        let scopes = o.isGlobal ? ["*"] : o.scopes.map { $0.contains(" ") ? "'\($0)'" : $0 }
        let patterns = scopes.flatMap { sc in o.names.map { "\(sc):\($0)" } }.joined(separator: "|")
        s += "        \(patterns)) \(action.isEmpty ? "" : action + "; ")return ;;\n"
    }
    s += "    esac\n"
    let global = Table.options.filter(\.isGlobal).flatMap(\.names).joined(separator: " ")
    s += "    if [[ $cur == -* ]]; then\n"
    s += "        local opts='\(global)'\n"
    s += "        case $scope in\n"
    // Each scope (a command, or a command and a subcommand) with the options it takes, in table order.
    for scope in Table.commands.flatMap({ c in [c.name] + c.subcommands.map { "\(c.name) \($0.name)" } }) {
        let names = Table.options.filter { $0.scopes.contains(scope) }.flatMap(\.names)
        guard !names.isEmpty else { continue }
        s += "            \(scope.contains(" ") ? "'\(scope)'" : scope)) opts+=' \(names.joined(separator: " "))' ;;\n"
    }
    s += "        esac\n"
    s += "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
    s += "    elif [[ -z $command ]]; then\n"
    s += "        COMPREPLY=($(compgen -W '\(Table.commands.map(\.name).joined(separator: " "))' -- \"$cur\"))\n"
    s += "    elif [[ -z $sub ]]; then\n"
    s += "        case $command in\n"
    for c in Table.commands {
        let operand: Completion = c.subcommands.isEmpty ? c.operand : .words(c.subcommands.map(\.name))
        guard let action = bashWords(operand), !action.isEmpty else { continue }
        s += "            \(c.name)) \(action) ;;\n"
    }
    s += "        esac\n"
    if !thenScopes.isEmpty {
        s += "    else\n"
        s += "        case \"$command $sub\" in\n"
        for t in thenScopes {
            guard let action = bashWords(t.operands), !action.isEmpty else { continue }
            s += "            '\(t.scope)') \(action) ;;\n"
        }
        s += "        esac\n"
    }
    s += "    fi\n"
    s += "}\n"
    s += "complete -F _appearancectl appearancectl\n"
    return s
}

// MARK: zsh

/// Text inside a single-quoted zsh word.
private func zshQuoted(_ text: String) -> String {
    text.replacingAll("'", with: "'\\''")
}

private func zshAction(_ c: Completion, state: String?) -> String {
    if let state { return "->\(state)" }
    switch c {
    case .nothing: return ""
    case .files: return "_files"
    case .plists: return "_files -g \"*.plist\""
    case .words(let w): return "(\(w.joined(separator: " ")))"
    case .command: return "_normal"
    case .daemon(let what): return "_appearancectl_list \(what.rawValue)"
    }
}

private func zshCompletion() -> String {
    var s = "#compdef appearancectl\n" + header(.zsh) + "\n"
    s += """
        # Words from the running daemon (nothing when none answers within appearancectl's 0.5 s), on the
        # line's own --socket if it names one.
        (( $+functions[_appearancectl_list] )) || _appearancectl_list() {
          local -a words
          words=(${(f)"$(appearancectl ${opt_args[--socket]:+--socket} ${opt_args[--socket]} completions list $1 </dev/null 2>/dev/null)"})
          compadd -a words
        }


        """
    s += "local -a commands\ncommands=(\n"
    for c in Table.commands { s += "  '\(zshQuoted(c.name + ":" + c.summary))'\n" }
    s += ")\n\n_arguments -S \\\n"
    var states: [(name: String, specs: [OptionSpec])] = []
    var done: Set<String> = []
    for o in Table.options where !done.contains(o.name) {
        done.insert(o.name)
        let all = Table.specs(named: o.name)
        let scopes = all.flatMap(\.scopes)
        // An option with an entry per command: a flag says each meaning; --format has its values by command.
        let summary = all.count > 1 && o.value == nil
            ? all.map { $0.scopes.joined(separator: ", ") + ": " + $0.summary }.joined(separator: "; ")
            : (scopes.isEmpty ? "" : scopes.joined(separator: ", ") + ": ") + (all.count > 1 ? "output format" : o.summary)
        let state: String? = all.count > 1 && o.value != nil ? String(o.name.drop { $0 == "-" }) : nil
        if let state { states.append((state, all)) }
        let valueMark = o.value != nil && o.completion != .command ? "=" : ""
        let written = o.names.map { $0.hasPrefix("--") ? $0 + valueMark : $0 }
        let exclusive = o.isGlobal && o.value == nil ? "(- *)" : o.names.count > 1 ? "(\(o.names.sorted().joined(separator: " ")))" : ""
        // `'(-o --output)'{-o,--output=}'[...]...'` for an option with two names, `'--mode=[...]...'` for one.
        var spec = written.count > 1
            ? "'\(exclusive)'{\(written.reversed().joined(separator: ","))}'[\(zshQuoted(summary))]"
            : "'\(exclusive)\(written[0])[\(zshQuoted(summary))]"
        if let value = o.value {
            spec += o.completion == .command
                ? ":*::command:_normal"
                : ":\(value.lowercased()):\(zshQuoted(zshAction(o.completion, state: state)))"
        }
        s += "  \(spec)' \\\n"
    }
    s += "  '1:command:->command' \\\n  '2:argument:->argument'" + (thenScopes.isEmpty ? "" : " \\\n  '*:argument:->rest'") + " && return\n\n"
    s += "case $state in\n"
    s += "  command) _describe -t commands command commands ;;\n"
    s += "  argument)\n    case $line[1] in\n"
    for c in Table.commands {
        if !c.subcommands.isEmpty {
            s += "      \(c.name)) _values subcommand \(c.subcommands.map(\.name).joined(separator: " ")) ;;\n"
        } else if case .words(let w) = c.operand {
            s += "      \(c.name)) _values \(c.name == "set" ? "mode" : "argument") \(w.joined(separator: " ")) ;;\n"
        } else if c.operand == .files {
            s += "      \(c.name)) _files ;;\n"
        } else if case .daemon(let what) = c.operand {
            s += "      \(c.name)) _appearancectl_list \(what.rawValue) ;;\n"
        }
    }
    s += "    esac ;;\n"
    if !thenScopes.isEmpty {
        s += "  rest)\n    case \"$line[1] $line[2]\" in\n"
        for t in thenScopes {
            let action = zshAction(t.operands, state: nil)
            guard !action.isEmpty else { continue }
            s += "      '\(t.scope)') \(action.hasPrefix("(") ? "_values argument " + action.dropFirst().dropLast() : action) ;;\n"
        }
        s += "    esac ;;\n"
    }
    for (name, specs) in states {
        s += "  \(name))\n    case $line[1] in\n"
        for o in specs {
            if case .words(let w) = o.completion {
                s += "      \(o.scopes.joined(separator: "|"))) _values \(name) \(w.joined(separator: " ")) ;;\n"
            }
        }
        s += "    esac ;;\n"
    }
    s += "esac\n"
    return s
}

// MARK: fish

/// A single-quoted fish word.
private func fishQuoted(_ text: String) -> String {
    "'" + text.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
}

/// The fish condition for a scope: the command seen, and its subcommand (or, for the command, none of them).

private func fishCondition(_ scope: String) -> String {
    let parts = scope.split(separator: " ")
    if parts.count == 2 { return "__fish_seen_subcommand_from \(parts[0]); and __fish_seen_subcommand_from \(parts[1])" }
    let subs = Table.command(scope)?.subcommands.map(\.name) ?? []
    return "__fish_seen_subcommand_from \(scope)" + (subs.isEmpty ? "" : "; and not __fish_seen_subcommand_from \(subs.joined(separator: " "))")
}

/// What fish offers for `c`: words (`-a "…"`) or files (`-F`); nil for nothing.
private func fishOffer(_ c: Completion) -> String? {
    switch c {
    case .nothing: nil
    case .files, .plists: "-F"
    case .words(let w): "-a \"\(w.joined(separator: " "))\""
    case .command: "-a \"(__fish_complete_subcommand --fcs-skip=3)\""
    case .daemon(let what): "-a \"(__appearancectl_list \(what.rawValue))\""
    }
}

/// An option's value: `-r` (files too) or `-x` (no files), then the offer.
private func fishValue(_ c: Completion) -> String {
    ([.files, .plists, .command].contains(c) ? " -r" : " -x") + (fishOffer(c).map { " " + $0 } ?? "")
}

/// The line offering `c`'s words or files where `condition` holds; none for nothing to offer.
private func fishOperands(_ c: Completion, _ condition: String) -> String {
    guard c != .command, let offer = fishOffer(c) else { return "" }
    return "complete -c appearancectl -n \"\(condition)\" \(offer)\n"
}

private func fishCompletion() -> String {
    var s = header(.fish)
    s += "set -l commands \(Table.commands.map(\.name).joined(separator: " "))\n"
    s += "complete -c appearancectl -f\n"
    s += """
        # Words from the running daemon (nothing when none answers within appearancectl's 0.5 s), on the
        # line's own --socket if it names one.
        function __appearancectl_list
            set -l words (commandline -opc)
            set -l socket
            for i in (seq (count $words))
                switch $words[$i]
                    case '--socket=*'
                        set socket --socket (string replace -- --socket= '' $words[$i])
                    case --socket
                        test $i -lt (count $words); and set socket --socket $words[(math $i + 1)]
                end
            end
            appearancectl $socket completions list $argv[1] </dev/null 2>/dev/null
        end

        """
    for c in Table.commands {
        s += "complete -c appearancectl -n \"not __fish_seen_subcommand_from $commands\" -a \(c.name) -d \(fishQuoted(c.summary))\n"
    }
    for c in Table.commands {
        let words: [String] = if case .words(let w) = c.operand { w } else { [] }
        let exclude = c.subcommands.map(\.name) + words
        let condition = "__fish_seen_subcommand_from \(c.name)" + (exclude.isEmpty ? "" : "; and not __fish_seen_subcommand_from \(exclude.joined(separator: " "))")
        for sub in c.subcommands {
            s += "complete -c appearancectl -n \"\(condition)\" -a \(sub.name) -d \(fishQuoted(sub.summary))\n"
        }
        s += fishOperands(c.operand, condition)
        for t in c.then { s += fishOperands(t.operands, "__fish_seen_subcommand_from \(c.name); and __fish_seen_subcommand_from \(t.after)") }
    }
    for o in Table.options {
        let names = o.names.map { $0.hasPrefix("--") ? "-l \($0.dropFirst(2))" : "-s \($0.dropFirst())" }.joined(separator: " ")
        let value = o.value == nil ? "" : fishValue(o.completion)
        // Scopes of plain commands share one condition; a subcommand's scope, or a command with subcommands, has its own.
        let plain = o.scopes.filter { !$0.contains(" ") && Table.command($0)?.subcommands.isEmpty != false }
        var conditions = plain.isEmpty ? [] : ["__fish_seen_subcommand_from \(plain.joined(separator: " "))"]
        conditions += o.scopes.filter { !plain.contains($0) }.map(fishCondition)
        if o.isGlobal { conditions = [""] }
        for condition in conditions {
            let n = condition.isEmpty ? "" : " -n \"\(condition)\""
            s += "complete -c appearancectl\(n) \(names)\(value) -d \(fishQuoted(o.summary))\n"
        }
    }
    return s
}

extension String {
    /// Every `target` replaced (without Foundation).
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
