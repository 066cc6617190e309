// swift-tools-version:6.0
// The targets read like the architecture in docs/architecture.md:
//   CDBus → AppearanceBus (all libdbus pointer code: the sentry and the portal backend) → AppearanceCore types
//   AppearanceCore (pure) ← AppearanceProtocol ← AppearanceKit ← appearancectl, appearance-example
//   AppearanceDaemon (Core + Protocol, sentry and outlet passed in) ← appearanced (wires AppearanceBus in)
// Every import is a declared dependency: `make test` runs scripts/check-imports.py first, so an arrow that is
// used but not drawn here fails the run.
// No third-party packages: see docs/decisions.md for why each was left out.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

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
        .target(name: "AppearanceCore", swiftSettings: strict),
        .target(name: "AppearanceProtocol", dependencies: ["AppearanceCore"], swiftSettings: strict),
        .target(name: "AppearanceBus", dependencies: ["CDBus", "AppearanceCore"], swiftSettings: strict),
        .target(name: "AppearanceDaemon", dependencies: ["AppearanceCore", "AppearanceProtocol"], swiftSettings: strict),
        .target(name: "AppearanceKit", dependencies: ["AppearanceCore", "AppearanceProtocol"], swiftSettings: strict),
        .executableTarget(name: "appearanced", dependencies: ["AppearanceCore", "AppearanceDaemon", "AppearanceBus"],
                          swiftSettings: strict),
        .executableTarget(name: "appearancectl", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearanceKit"],
                          swiftSettings: strict),
        // examples/swift-watch: a small app on AppearanceKit, built and run by the end-to-end tests.
        .executableTarget(name: "appearance-example", dependencies: ["AppearanceKit"], path: "examples/swift-watch",
                          swiftSettings: strict),

        // Everything that reads outside bytes, in one function: driven by libFuzzer and by the corpus replay test.
        .target(name: "AppearanceFuzzing", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearanceDaemon"],
                swiftSettings: strict),

        // Test-only helpers: private dbus-daemon, fake portal, real portal stack, daemon processes.
        .target(name: "TestSupport", path: "Tests/Support", exclude: ["fake-portal.py"], swiftSettings: strict),
        .testTarget(name: "AppearanceCoreTests", dependencies: ["AppearanceCore"], swiftSettings: strict),
        .testTarget(name: "AppearanceProtocolTests", dependencies: ["AppearanceCore", "AppearanceProtocol"], swiftSettings: strict),
        .testTarget(name: "AppearanceBusTests", dependencies: ["AppearanceCore", "AppearanceBus", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AppearanceDaemonTests", dependencies: ["AppearanceCore", "AppearanceDaemon"], swiftSettings: strict),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["AppearanceFuzzing"], swiftSettings: strict),
        .testTarget(name: "EndToEndTests", dependencies: ["AppearanceCore", "AppearanceKit", "AppearanceProtocol", "TestSupport"],
                    exclude: ["Golden", "Scripts"], swiftSettings: strict),
    ]
)

// The libFuzzer executable exists only for `make fuzz` (APPEARANCED_FUZZ=1): it has no main and links only
// with `--sanitize fuzzer`.
if Context.environment["APPEARANCED_FUZZ"] != nil {
    package.targets.append(.executableTarget(name: "appearanced-fuzz", dependencies: ["AppearanceFuzzing"],
                                             path: "Fuzz/appearanced-fuzz", swiftSettings: strict))
}
