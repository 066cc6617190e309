// swift-tools-version:6.0
// The targets read like the architecture in docs/architecture.md:
//   CDBus → AppearanceBus (all libdbus pointer code) → AppearanceCore types
//   AppearanceCore (pure) ← AppearanceProtocol ← AppearanceKit ← appearancectl, appearance-example
//   AppearanceDaemon (Core + Protocol, sentry passed in) ← appearanced (wires AppearanceBus in)
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
        .target(name: "AppearanceKit", dependencies: ["AppearanceProtocol"], swiftSettings: strict),
        .executableTarget(name: "appearanced", dependencies: ["AppearanceDaemon", "AppearanceBus"], swiftSettings: strict),
        .executableTarget(name: "appearancectl", dependencies: ["AppearanceKit"], swiftSettings: strict),
        // examples/swift-watch: a small app on AppearanceKit, built and run by the end-to-end tests.
        .executableTarget(name: "appearance-example", dependencies: ["AppearanceKit"], path: "examples/swift-watch",
                          swiftSettings: strict),

        // Everything that reads outside bytes, in one function: driven by libFuzzer and by the corpus replay test.
        .target(name: "AppearanceFuzzing", dependencies: ["AppearanceCore", "AppearanceProtocol", "AppearanceDaemon"],
                swiftSettings: strict),

        // Test-only helpers: private dbus-daemon, fake portal, real portal stack, daemon processes.
        .target(name: "TestSupport", path: "Tests/Support", exclude: ["fake-portal.py"], swiftSettings: strict),
        .testTarget(name: "AppearanceCoreTests", dependencies: ["AppearanceCore"], swiftSettings: strict),
        .testTarget(name: "AppearanceProtocolTests", dependencies: ["AppearanceProtocol"], swiftSettings: strict),
        .testTarget(name: "AppearanceBusTests", dependencies: ["AppearanceBus", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AppearanceDaemonTests", dependencies: ["AppearanceDaemon"], swiftSettings: strict),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["AppearanceFuzzing"], swiftSettings: strict),
        .testTarget(name: "EndToEndTests", dependencies: ["AppearanceKit", "AppearanceProtocol", "TestSupport"],
                    exclude: ["Golden", "Scripts"], swiftSettings: strict),
    ]
)

// The libFuzzer executable exists only for `make fuzz` (APPEARANCED_FUZZ=1): it has no main and links only
// with `--sanitize fuzzer`.
if Context.environment["APPEARANCED_FUZZ"] != nil {
    package.targets.append(.executableTarget(name: "appearanced-fuzz", dependencies: ["AppearanceFuzzing"],
                                             path: "Fuzz/appearanced-fuzz", swiftSettings: strict))
}
