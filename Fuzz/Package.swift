// swift-tools-version: 6.1
// Coverage-guided fuzzing of every parser geoalarm has, with libFuzzer. Kept apart from the main
// package because it is built with `-sanitize=fuzzer,address`. Run it with `make fuzz`.
import PackageDescription

let package = Package(
    name: "geoalarm-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "geoalarm", path: ".."),
    ],
    targets: [
        // libFuzzer's driver entry point, declared for Swift (a header, no code).
        .systemLibrary(name: "CLibFuzzer"),
        // `geoalarm-fuzz TARGET [libFuzzer options] [corpus folders]`.
        .executableTarget(
            name: "geoalarm-fuzz",
            dependencies: ["CLibFuzzer", .product(name: "GeoAlarmParsers", package: "geoalarm")]
        ),
    ]
)
