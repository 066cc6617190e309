import AppearanceFormats
import Foundation
import Testing

/// `[integrations.NAME]` as read, what `describe` says, and the check of one against the other.
struct IntegrationSettingsTests {
    static let path = ConfigTests.path

    @Test func describeGivesTheKeys() {
        let d = IntegrationDescription(output: "what: colors\ntouches: a file\nsettings: dark (theme for dark; or none, none); light (theme, none); dark-colors (colors or colors2, colors)\n")
        #expect(d.what == "colors" && d.touches == "a file")
        #expect(d.keys == ["dark", "light", "dark-colors"])
        #expect(IntegrationDescription(output: "settings: none").keys == [])
        #expect(IntegrationDescription(output: "settings: a word").keys == ["a"], "a key without its parentheses")
        #expect(IntegrationDescription(output: "settings: Dark (x); light (y)").keys == nil, "not a setting's name: cannot be checked")
        #expect(IntegrationDescription(output: "what: little").keys == nil)
    }

    /// Every shipped integration's settings line reads as keys (the check depends on it).
    @Test func everyShippedDescriptionReads() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("integrations")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0 != "lib" }
        #expect(names.count >= 11)
        for name in names {
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            let line = text.split(separator: "\n").first { $0.contains("echo \"settings: ") }.map { String($0.split(separator: "\"")[1]) }
            let keys = IntegrationDescription(output: line ?? "").keys
            #expect(keys != nil && keys?.isEmpty == false, "\(name): \(line ?? "no settings line")")
        }
    }

    @Test func whereEachTableAndKeyIs() throws {
        let c = try Config.parse("[integrations.kitty]\ndark = \"a\"\n\nlight = \"b\"\n[integrations.vim]\n", path: Self.path)
        #expect(c.integrationLines == ["kitty": IntegrationLines(table: 1, keys: ["dark": 2, "light": 4]), "vim": IntegrationLines(table: 5)])
    }

    @Test func theFirstMistakeInTheFilesOrder() throws {
        let c = try Config.parse("[integrations.vim]\nfile = \"x\"\nfiel = \"y\"\n[integrations.kitty]\ndarkk = \"x\"\n[integrations.kittty]\n", path: Self.path)
        let found: Set<String> = ["kitty", "vim"]
        let described = ["kitty": IntegrationDescription(output: "settings: dark (x); light (y)"), "vim": IntegrationDescription(output: "settings: file (f, x)")]
        #expect(c.integrationProblem(found: found, described: described, path: Self.path)?.description
                == "\(Self.path):3: integrations.vim.fiel: unknown setting (vim's settings: file, app)")
        // Not described (it could not be asked): its keys are not checked; the next mistake is the name.
        #expect(c.integrationProblem(found: found, described: ["kitty": described["kitty"]!], path: Self.path)?.description
                == "\(Self.path):5: integrations.kitty.darkk: unknown setting (kitty's settings: dark, light, app)")
        #expect(c.integrationProblem(found: found, described: [:], path: Self.path, notFoundHint: "; searched /x")?.description
                == "\(Self.path):6: integrations.kittty: no integration named \"kittty\" is installed (found: kitty, vim); searched /x")
        let none = try Config.parse("[integrations.tmux]\nenabled = true\napp = \"term\"\n", path: Self.path)
        #expect(none.integrationProblem(found: ["tmux"], described: ["tmux": IntegrationDescription(output: "settings: none")], path: Self.path)?.description
                == "\(Self.path):2: integrations.tmux.enabled: unknown setting (tmux has no settings but app); integrations are enabled with "
                + "`appearancectl integrations enable NAME`, not in the config, which holds their settings")
    }

    @Test func enablingInTheConfigIsNamed() {
        for text in ["[integrations]\nenabled = [\"kitty\"]\n", "integrations = [\"kitty\"]\n"] {
            #expect(throws: ConfigError.self) { try Config.parse(text, path: Self.path) }
            do { _ = try Config.parse(text, path: Self.path) } catch {
                #expect(error.message.hasSuffix("; integrations are enabled with `appearancectl integrations enable NAME`, not in the config, which holds their settings"), "\(error)")
            }
        }
    }
}
