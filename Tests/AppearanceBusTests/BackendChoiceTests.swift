import AppearanceCore
import Testing
@testable import AppearanceBus

/// `portal-backend = "auto"` decides as the portal frontend chooses its Settings backends.
struct BackendChoiceTests {
    static let gtk = PortalFile(name: "gtk.portal", text: """
        [portal]
        DBusName=org.freedesktop.impl.portal.desktop.gtk
        Interfaces=org.freedesktop.impl.portal.FileChooser;org.freedesktop.impl.portal.Settings;
        UseIn=gnome
        """)!
    static let kde = PortalFile(name: "kde.portal", text: "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.kde\nInterfaces=org.freedesktop.impl.portal.Settings;\nUseIn=KDE\n")!
    static let wlr = PortalFile(name: "wlr.portal", text: "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.wlr\nInterfaces=org.freedesktop.impl.portal.Screenshot;org.freedesktop.impl.portal.ScreenCast;\nUseIn=wlroots;sway;Wayfire;river;phosh;Hyprland;\n")!
    static let ours = PortalFile(name: "appearanced.portal", text: "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.appearanced\nInterfaces=org.freedesktop.impl.portal.Settings;\nUseIn=sway;i3\n")!
    static let all = [gtk, kde, wlr, ours]

    @Test("auto", arguments: [
        (["sway"], true, "no other Settings backend for sway"),
        (["Hyprland"], true, "no other Settings backend for Hyprland"),
        (["GNOME"], false, "gtk.portal provides Settings for GNOME"),
        (["ubuntu", "GNOME"], false, "gtk.portal provides Settings for ubuntu:GNOME"),
        (["KDE"], false, "kde.portal provides Settings for KDE"),
        (["kde"], false, "kde.portal provides Settings for kde"),
        ([], false, #"XDG_CURRENT_DESKTOP is not set, so no desktop to serve (portal-backend = "on" serves anyway)"#),
    ])
    func auto(desktops: [String], serve: Bool, reason: String) {
        let choice = BackendChoice.decide(.auto, desktops: desktops, portals: Self.all, conf: nil)
        #expect(choice.serve == serve)
        #expect(choice.reason == reason)
    }

    @Test func onAndOffDoNotLook() {
        #expect(BackendChoice.decide(.on, desktops: ["GNOME"], portals: Self.all, conf: nil) == (true, #"portal-backend = "on""#))
        #expect(BackendChoice.decide(.off, desktops: ["sway"], portals: [Self.ours], conf: nil) == (false, #"portal-backend = "off""#))
    }

    @Test func portalsConfDecidesWhenItNamesSettings() {
        let conf = { (text: String) in PortalsConf(path: "/h/.config/xdg-desktop-portal/sway-portals.conf", text: text) }
        let chosen = BackendChoice.decide(.auto, desktops: ["sway"], portals: Self.all,
                                          conf: conf("[preferred]\ndefault=wlr;gtk\norg.freedesktop.impl.portal.Settings=appearanced\n"))
        #expect(chosen == (true, "/h/.config/xdg-desktop-portal/sway-portals.conf chooses appearanced for Settings"))
        let other = BackendChoice.decide(.auto, desktops: ["sway"], portals: Self.all, conf: conf("[preferred]\ndefault=wlr;gtk\n"))
        #expect(other == (false, "/h/.config/xdg-desktop-portal/sway-portals.conf chooses wlr;gtk for Settings"))
        // `*` means every backend: the .portal files decide, as without a conf.
        let any = BackendChoice.decide(.auto, desktops: ["sway"], portals: Self.all, conf: conf("[preferred]\ndefault=*\n"))
        #expect(any.serve)
        // Keys outside [preferred] do not count.
        #expect(conf("[other]\norg.freedesktop.impl.portal.Settings=gtk\n").settings == nil)
    }

    @Test func portalFilesAreReadAsTheFrontendReadsThem() {
        #expect(Self.gtk.interfaces.contains("org.freedesktop.impl.portal.Settings"))
        #expect(Self.wlr.useIn == ["wlroots", "sway", "Wayfire", "river", "phosh", "Hyprland"])
        #expect(PortalFile(name: "broken.portal", text: "[portal]\nInterfaces=x\n") == nil)
        let spaced = PortalFile(name: "s.portal", text: "# comment\n[portal]\n DBusName = a.b \nUseIn = x ; y\n")
        #expect(spaced?.dbusName == "a.b" && spaced?.useIn == ["x", "y"])
    }

    @Test("ReadAll namespace patterns", arguments: [
        ([String](), true), ([""], true), (["org.freedesktop.appearance"], true), (["org.freedesktop.*"], true),
        (["org.*"], true), (["org.gnome.*"], false), (["org.freedesktop.appearance.x"], false), (["org.gnome.desktop", "org.freedesktop.*"], true),
    ])
    func readAllPatterns(patterns: [String], matches: Bool) {
        #expect(PortalBackend.matches(patterns, "org.freedesktop.appearance") == matches)
    }
}
