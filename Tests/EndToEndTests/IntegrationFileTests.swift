import Foundation
import Testing
import TestSupport

/// A user's config file as an integration finds it.
struct UserFile: Sendable, CustomTestStringConvertible {
    var integration: String
    /// Relative to XDG_CONFIG_HOME, or `~/…` for HOME.
    var path: String
    /// nil: the file does not exist.
    var content: String?
    var settings: [String: String] = [:]
    /// Other files of the user's the case needs (theme files), relative as `path`.
    var extra: [String: String] = [:]
    /// Whether the user's lines stay whole lines (not so for a one-line `{}` the block goes into).
    var keepsLines = true
    var testDescription: String { "\(integration): \(path) \(content == nil ? "absent" : "with the user's lines")" }
}

/// What every file-editing integration must do with real files: change only its marked block (or its own
/// included file), keep the user's formatting and comments, restore byte for byte, remove what it created,
/// and refuse a symlink that leads out of the user's config folder.
@Suite("Integration scripts: the user's files") struct IntegrationFileTests {
    static let qtColors = ["qt5ct/colors/darker.conf": "[ColorScheme]\nactive_colors=#ff000000\n",
                           "qt5ct/colors/airy.conf": "[ColorScheme]\nactive_colors=#ffffffff\n"]

    /// Comments, odd spacing, tabs, a CR, a missing final newline: all must come back as they were.
    static let cases: [UserFile] = [
        UserFile(integration: "kitty", path: "kitty/kitty.conf",
                 content: "# my kitty\n\tfont_size   11   # odd\n\n  # indented comment\nbackground #000000"),
        UserFile(integration: "kitty", path: "kitty/kitty.conf", content: nil),
        UserFile(integration: "foot", path: "foot/foot.ini",
                 content: "# foot\n[main]\nfont=monospace:size=11\n\n[colors]\nbackground=000000   \n"),
        UserFile(integration: "foot", path: "foot/foot.ini", content: nil),
        UserFile(integration: "alacritty", path: "alacritty/alacritty.toml",
                 content: "# mine\n[font]\nsize = 11   # big\n\n[colors.primary]\nbackground = '#000000'"),
        UserFile(integration: "alacritty", path: "alacritty/alacritty.yml",
                 content: "# mine\nfont:\n  size: 11 # big\n"),
        UserFile(integration: "vim", path: "~/.vim/plugin/appearanced.vim", content: nil),
        UserFile(integration: "vim", path: "~/.vimrc", content: "\" mine\nset number\r\nsyntax on",
                 settings: ["file": "~/.vimrc"]),
        UserFile(integration: "gtk", path: "gtk-3.0/settings.ini",
                 content: "[Settings]\ngtk-font-name = Sans 11\n# comment\ngtk-application-prefer-dark-theme=0\n",
                 settings: ["backend": "settings.ini", "dark-theme": "Adwaita-dark"]),
        UserFile(integration: "gtk", path: "gtk-4.0/settings.ini", content: nil, settings: ["backend": "settings.ini"]),
        UserFile(integration: "qt", path: "qt5ct/qt5ct.conf",
                 content: "[Appearance]\r\nstyle=Fusion\r\ncustom_palette=false\r\n", extra: qtColors),
        UserFile(integration: "qt", path: "Kvantum/kvantum.kvconfig", content: "[General]\ntheme=KvMine\n",
                 settings: ["dark-kvantum": "KvDark", "light-kvantum": "KvLight"]),
        UserFile(integration: "vscode", path: "Code/User/settings.json",
                 content: "// my settings\n{\n\t\"editor.fontSize\": 13, /* big */\n\t\"nested\": {\"workbench.colorTheme\": 1},\n}"),
        UserFile(integration: "vscode", path: "VSCodium/User/settings.json", content: "{}",
                 settings: ["method": "auto-detect"], keepsLines: false),
    ]

    static func prepare(_ c: UserFile, _ rig: IntegrationRig) throws {
        for (path, text) in c.extra { try rig.write(text, to: rig.file(path)) }
        if let content = c.content {
            try rig.write(content, to: rig.file(c.path))
        } else {
            // The program's folder exists (VS Code's is how the integration knows the app is used).
            try FileManager.default.createDirectory(atPath: (rig.file(c.path) as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
        }
    }

    @Test(arguments: cases) func roundTripIsByteIdentical(c: UserFile) throws {
        let rig = try IntegrationRig()
        try Self.prepare(c, rig)
        let before = rig.userFiles()
        let path = rig.file(c.path)
        for mode in ["dark", "light", "light", "dark", "light"] {
            let r = try rig.run(c.integration, "apply", mode: mode, settings: c.settings)
            #expect(r.status == 0, "apply \(mode): \(r)")
            let now = try #require(rig.read(path), "\(path) missing after apply")
            let begin = (c.path.hasSuffix(".vim") || c.path.hasSuffix("vimrc") ? "\"" : c.path.hasSuffix(".json") ? "//" : "#")
                + " >>> appearanced \(c.integration) >>>"
            #expect(Self.lines(now).filter { $0 == begin }.count == 1, "one marked block in \(now)")
            if let content = c.content, c.keepsLines {
                // The user's lines are all still there, in their order, untouched.
                #expect(Self.isSubsequence(Self.lines(content), of: Self.lines(now)),
                        "the user's lines were changed: \(now)")
            }
        }
        let r = try rig.run(c.integration, "restore")
        #expect(r.status == 0, "restore: \(r)")
        #expect(rig.read(path) == c.content, "after restore: \(rig.read(path) ?? "(absent)")")
        #expect(rig.userFiles() == before, "files left or lost: \(rig.userFiles().symmetricDifference(before))")
        // And again: restore is the end of it, a second one changes nothing.
        let again = try rig.run(c.integration, "restore")
        #expect(again.status == 0 && rig.read(path) == c.content, "\(again)")
    }

    /// Lines split at "\n" alone: a "\r" before it stays (Swift's String takes "\r\n" as one character).
    static func lines(_ text: String) -> [String] {
        text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
    }

    static func isSubsequence(_ small: [String], of big: [String]) -> Bool {
        var i = small.startIndex
        for line in big where i < small.endIndex && line == small[i] { i += 1 }
        return i == small.endIndex
    }

    /// A dotfiles manager's symlink to a file outside the config folder is not followed: the integration
    /// refuses with one line, and neither the link nor its target changes.
    @Test(arguments: cases.filter { $0.content != nil }) func refusesASymlinkOutOfTheConfigFolder(c: UserFile) throws {
        let rig = try IntegrationRig()
        try Self.prepare(c, rig)
        let target = rig.root + "/outside/" + (c.path as NSString).lastPathComponent
        try FileManager.default.moveItem(atPath: rig.file(c.path), toPath: target)
        try FileManager.default.createSymbolicLink(atPath: rig.file(c.path), withDestinationPath: target)
        let r = try rig.run(c.integration, "apply", mode: "dark", settings: c.settings)
        #expect(r.status == 1, "\(r)")
        #expect(r.errLines.count == 1 && r.err.contains("is a symlink to \(target), outside"), "\(r)")
        #expect(rig.read(target) == c.content)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: rig.file(c.path))) == target)
    }

    /// A file set outside the folder the integration may change is refused before anything is created.
    @Test func refusesAFileSetOutsideItsFolder() throws {
        let rig = try IntegrationRig()
        let outside = rig.root + "/outside/new/vimfile.vim"
        let r = try rig.run("vim", "apply", mode: "dark", settings: ["file": outside])
        #expect(r.status == 1, "\(r)")
        #expect(r.errLines == ["vim: \(outside) resolves to \(outside), outside \(rig.home): not changing it"], "\(r)")
        #expect(!FileManager.default.fileExists(atPath: rig.root + "/outside/new"))
    }

    /// A symlink that stays inside the config folder is followed: the target is edited, the link stays.
    @Test func followsASymlinkInsideTheConfigFolder() throws {
        let rig = try IntegrationRig()
        let target = rig.config + "/dotfiles/kitty.conf"
        try rig.write("# mine\n", to: target)
        try FileManager.default.createDirectory(atPath: rig.config + "/kitty", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: rig.config + "/kitty/kitty.conf", withDestinationPath: target)
        let r = try rig.run("kitty", "apply", mode: "dark")
        #expect(r.status == 0, "\(r)")
        #expect(rig.read(target)?.contains("include appearanced.conf") == true)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: rig.config + "/kitty/kitty.conf")) == target)
        _ = try rig.run("kitty", "restore")
        #expect(rig.read(target) == "# mine\n")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: rig.config + "/kitty/kitty.conf")) == target)
    }

    /// The user edits the file between apply and restore: restore takes out only the marked block and keeps
    /// the user's new line.
    @Test func restoreKeepsTheUsersLaterEdit() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/kitty/kitty.conf"
        try rig.write("# mine\n", to: path)
        #expect(try rig.run("kitty", "apply", mode: "dark").status == 0)
        try rig.write((rig.read(path) ?? "") + "font_size 13\n", to: path)
        let r = try rig.run("kitty", "restore")
        #expect(r.status == 0, "\(r)")
        #expect(rig.read(path) == "# mine\nfont_size 13\n")
        #expect(r.out.contains("only the marked block was taken out"), "\(r)")
    }

    /// Writes are atomic: a rename in the file's folder, which leaves no temporary file behind, and keeps
    /// the file's permissions.
    @Test func keepsPermissionsAndLeavesNoTemporaryFile() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/kitty/kitty.conf"
        try rig.write("# mine\n", to: path)
        chmod(path, 0o600)
        #expect(try rig.run("kitty", "apply", mode: "light").status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let left = try FileManager.default.contentsOfDirectory(atPath: rig.config + "/kitty")
        #expect(Set(left) == ["kitty.conf", "appearanced.conf"], "\(left)")
    }

    /// A setting the user already gives in the same file outside the block is not fought over.
    @Test func vscodeRefusesAThemeTheUserSetsThemselves() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/Code/User/settings.json"
        let mine = "{\n  // mine\n  \"workbench.colorTheme\": \"Solarized\"\n}\n"
        try rig.write(mine, to: path)
        let r = try rig.run("vscode", "apply", mode: "dark")
        #expect(r.status == 1, "\(r)")
        #expect(r.errLines == ["vscode: \(path) sets \"workbench.colorTheme\" itself (line 3): remove it there for appearanced to set it"], "\(r)")
        #expect(rig.read(path) == mine)
        _ = try rig.run("vscode", "restore")
        #expect(rig.read(path) == mine)
    }

    /// alacritty's own import list is the user's: the integration does not add a second one.
    @Test func alacrittyLeavesTheUsersImportListAlone() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/alacritty/alacritty.toml"
        let mine = "[general]\nimport = [\"~/themes/base.toml\"]\n"
        try rig.write(mine, to: path)
        let r = try rig.run("alacritty", "apply", mode: "dark")
        #expect(r.status == 1, "\(r)")
        #expect(r.errLines.count == 1 && r.err.contains("add \"\(rig.config)/alacritty/appearanced.toml\" to its import list"), "\(r)")
        #expect(rig.read(path) == mine)
        // Once the user imports it, every switch works without touching alacritty.toml.
        let theirs = "[general]\nimport = [\"~/themes/base.toml\", \"\(rig.config)/alacritty/appearanced.toml\"]\n"
        try rig.write(theirs, to: path)
        let ok = try rig.run("alacritty", "apply", mode: "light")
        #expect(ok.status == 0, "\(ok)")
        #expect(rig.read(path) == theirs)
        #expect(rig.read(rig.config + "/alacritty/appearanced.toml")?.contains("#f8f8f8") == true)
    }
}
