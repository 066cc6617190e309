// swift-tools-version:6.0
// bench/argparser: `appearancectl get` with its arguments parsed by swift-argument-parser, to measure what
// the library would cost at start-up (bench/argparser.py, docs/decisions.md). Not part of the product.
import PackageDescription

let package = Package(
    name: "argparser-bench",
    dependencies: [
        // bench/argparser.py links .build-link/appearanced to the repository, so the package identity is
        // "appearanced" whatever the checkout's folder is called.
        .package(path: ".build-link/appearanced"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
    ],
    targets: [
        .executableTarget(name: "appearancectl-ap", dependencies: [
            .product(name: "AppearanceKit", package: "appearanced"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
