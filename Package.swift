// swift-tools-version:6.0
// The targets read like the architecture in docs/architecture.md (an arrow: "is used by"; test targets aside):
//   AppearanceCore (pure types and rules) → AppearanceProtocol, AppearanceBus, AppearanceDecide, AppearanceFormats,
//                  AppearanceDaemon, AppearanceCLI, AppearanceKit, AppearanceFuzzing, appearanced, appearancectl
//   AppearanceProtocol (the wire format only: JSON, messages, framing) → AppearanceDecide, AppearanceFormats,
//                      AppearanceDaemon, AppearanceCLI, AppearanceKit, AppearanceFuzzing, appearancectl
//   CPosix (C shim, _GNU_SOURCE) → AppearancePosix (every syscall: descriptors, sockets, files, processes, signals,
//                                  the socket location) → AppearanceBus, AppearanceDaemon, AppearanceKit, appearancectl,
//                                  appearanced
//   CDBus → AppearanceBus (all libdbus pointer code: the sentry, the portal backend, the D-Bus service; uses
//           AppearanceProtocol for the D-Bus service's calls and errors) → appearanced
//   AppearanceDecide (the daemon's decisions, pure: request → change, echo or flip, lifetimes) → AppearanceDaemon,
//                    AppearanceFuzzing
//   AppearanceFormats (the files' formats, pure: TOML, config, palette, state.json, imports, palette output)
//                     → AppearanceDaemon, appearancectl, AppearanceFuzzing
//   AppearanceDaemon (sentry and outlet passed in) → appearanced (wires AppearanceBus in)
//   AppearanceCLI (the command lines as values: appearancectl's option table, parser, help, completions, and
//                 appearanced's options) → appearancectl, appearanced
//   AppearanceKit (client library) → appearancectl, appearance-example
//   AppearanceFuzzing (every reader of outside bytes) → appearanced-fuzz (only with APPEARANCED_FUZZ=1)
// No raw syscall outside AppearancePosix and AppearanceBus: scripts/check-imports.py allows Glibc only there, in
// AppearanceCore (its math, no system calls), in the example app and in the test support.
// Every import is a declared dependency: `make test` builds with SwiftPM's
// --explicit-target-dependency-import-check error and runs scripts/check-imports.py (SwiftPM's check accepts a
// target's transitive dependencies; the script does not), so an arrow that is used but not drawn here fails.
// No third-party packages: see docs/decisions.md for why each was left out.
import PackageDescription
#if canImport(Glibc)
import Glibc
#endif

// This file describes the product's build only. The builds benchmarks compare against (appearancectl without its
// order or linked dynamically, appearanced without its order, the POSIX layer on swift-system) are made by
// bench/variant.py from a copy of the tree it patches; the metadata-accessors build passes its flags to
// `swift build` (bench/cli_floor.py).
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]
// The daemon's release build leaves out the run-time exclusivity checks: its state is confined to one queue, debug
// builds (every test) keep them, and they were a third of a fan-out's instructions (docs/decisions.md).
let daemonSettings = strict + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

// appearancectl ships as a static executable (release builds): no dynamic loader work before main, which was
// two thirds of a `get` (docs/decisions.md, bench/cli_floor.py). lld links it: gold prints glibc's
// static-link notes for getpwuid and dlopen, which appearancectl never calls. Sanitizer and fuzz builds are debug
// or leave it out. The functions its common commands run are laid out together (link/appearancectl.order,
// written by `make cli-order`), so a `get` touches fewer pages. A stale list only costs speed: lld skips what it
// cannot find.
let cliLink: [LinkerSetting] = [
    .unsafeFlags(["-static-executable", "-use-ld=lld",
                  "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/link/appearancectl.order",
                  "-Xlinker", "--no-warn-symbol-ordering"], .when(configuration: .release)),
]
// appearanced stays dynamically linked (libdbus), but lld lays out first the functions it runs to start, serve
// and follow changes (link/appearanced.order, `make daemon-order`): the code it keeps
// resident shrinks (docs/decisions.md, "appearanced's functions are laid out together too"; bench/rss.py).
// Its relative relocations are packed (DT_RELR: a 5 KiB table instead of 651 KiB that stayed resident,
// docs/decisions.md, "Packed relative relocations") where the machine's C library reads them (glibc 2.36:
// Debian 12, Ubuntu 24.04); a binary built so does not start with an older one (Ubuntu 22.04's 2.35).
// Every symbol is bound at start (-z now: no resolver runs later), and the few writable sections Swift names
// .rodata get their own (link/writable-rodata.ld), so the real read-only data leaves the writable segment: the
// start-up's pages of both are let go (docs/decisions.md, "Idle memory").
let glibcReadsPackedRelocations: Bool = {
    #if canImport(Glibc)
    var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
    guard confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count) > 0 else { return false }
    let words = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ")
    let version = words.last?.split(separator: ".").compactMap { Int($0) } ?? []
    return version.count >= 2 && (version[0], version[1]) >= (2, 36)
    #else
    return false
    #endif
}()
let packedRelocations = glibcReadsPackedRelocations ? ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"] : []
let daemonLink: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker",
                  "--symbol-ordering-file=\(Context.packageDirectory)/link/appearanced.order",
                  "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "-z", "-Xlinker", "now",
                  "-Xlinker", "--script=\(Context.packageDirectory)/link/writable-rodata.ld"] + packedRelocations,
                 .when(configuration: .release)),
]

let package = Package(
    name: "appearanced",
    products: [
        .executable(name: "appearanced", targets: ["appearanced"]),
        .executable(name: "appearancectl", targets: ["appearancectl"]),
        .library(name: "AppearanceKit", targets: ["AppearanceKit"]),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // accept4, pipe2, struct ucred (SO_PEERCRED) and malloc_trim, which Swift cannot see without _GNU_SOURCE.
        .target(name: "CPosix"),
        .target(name: "AppearancePosix", dependencies: ["CPosix"], swiftSettings: strict),
        .target(name: "AppearanceCore", swiftSettings: strict),
        .target(name: "AppearanceProtocol", dependencies: ["AppearanceCore"], swiftSettings: strict),
        .target(name: "AppearanceBus", dependencies: ["CDBus", "AppearanceCore", "AppearanceProtocol", "AppearancePosix"], swiftSettings: strict),
        // The daemon's decisions as pure functions (request → change, the desktop's echo or the user's flip,
        // a temporary override's end): called by the daemon's shell, the fuzzer and table tests alike.
        .target(name: "AppearanceDecide", dependencies: ["AppearanceCore", "AppearanceProtocol"], swiftSettings: strict),
        // The files' formats, pure: TOML, config.toml, palette.toml, state.json's codec, the plist and darkman
        // imports and the palette's output formats; text or bytes in, values out (reading files is the caller's).
        .target(name: "AppearanceFormats", dependencies: ["AppearanceCore", "AppearanceProtocol"], swiftSettings: strict),
        .target(name: "AppearanceDaemon", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearancePosix", "AppearanceDecide",
                                                         "AppearanceFormats"],
                swiftSettings: daemonSettings),
        // appearancectl's command line as a value: the option table, the parser, the help and the completions.
        .target(name: "AppearanceCLI", dependencies: ["AppearanceCore", "AppearanceProtocol"], swiftSettings: strict),
        .target(name: "AppearanceKit", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearancePosix"],
                swiftSettings: strict),
        .executableTarget(name: "appearanced", dependencies: ["AppearanceCLI", "AppearanceCore", "AppearancePosix", "AppearanceDaemon", "AppearanceBus"],
                          swiftSettings: strict, linkerSettings: daemonLink),
        .executableTarget(name: "appearancectl", dependencies: ["AppearanceCLI", "AppearanceCore", "AppearanceProtocol",
                                                                "AppearancePosix", "AppearanceKit", "AppearanceFormats"],
                          swiftSettings: strict, linkerSettings: cliLink),
        // examples/swift-watch: a small app on AppearanceKit, built and run by the end-to-end tests.
        .executableTarget(name: "appearance-example", dependencies: ["AppearanceKit"], path: "examples/swift-watch",
                          swiftSettings: strict),

        // Everything that reads outside bytes, in one function: driven by libFuzzer and by the corpus replay test.
        .target(name: "AppearanceFuzzing", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearanceDecide", "AppearanceFormats"],
                path: "Fuzz/AppearanceFuzzing",
                swiftSettings: strict),

        // Test-only helpers: private dbus-daemon, fake portal, real portal stack, daemon processes.
        .target(name: "TestSupport", path: "Tests/Support", exclude: ["fake-portal.py"], swiftSettings: strict),
        .testTarget(name: "AppearanceCoreTests", dependencies: ["AppearanceCore"], swiftSettings: strict),
        .testTarget(name: "AppearanceCLITests", dependencies: ["AppearanceCLI", "AppearanceCore", "AppearanceProtocol"],
                    swiftSettings: strict),
        .testTarget(name: "AppearanceProtocolTests", dependencies: ["AppearanceCore", "AppearanceProtocol"], swiftSettings: strict),
        .testTarget(name: "AppearancePosixTests", dependencies: ["AppearancePosix", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AppearanceBusTests", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearanceBus", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AppearanceDecideTests", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearanceDecide"],
                    swiftSettings: strict),
        .testTarget(name: "AppearanceFormatsTests", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearanceFormats"],
                    swiftSettings: strict),
        .testTarget(name: "AppearanceDaemonTests", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearancePosix", "AppearanceDaemon"], swiftSettings: strict),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["AppearanceFuzzing"], swiftSettings: strict),
        .testTarget(name: "EndToEndTests", dependencies: ["AppearanceCore", "AppearanceKit", "AppearanceProtocol", "AppearancePosix", "TestSupport"],
                    exclude: ["Golden", "Scripts"], swiftSettings: strict),
    ]
)

// The libFuzzer executable exists only for `make fuzz` (APPEARANCED_FUZZ=1): it has no main and links only
// with `--sanitize fuzzer`.
if Context.environment["APPEARANCED_FUZZ"] != nil {
    package.targets.append(.executableTarget(name: "appearanced-fuzz", dependencies: ["AppearanceFuzzing"],
                                             path: "Fuzz/appearanced-fuzz", swiftSettings: strict))
}
