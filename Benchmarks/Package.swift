// swift-tools-version: 6.1
// geoalarm's benchmarks, kept apart so that the main package stays lean. Run them with `make bench`.
import PackageDescription

let package = Package(
    name: "geoalarm-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "geoalarm", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // Inputs every benchmark shares: the hundred reminders and a long walk through them.
        .target(
            name: "Workload",
            dependencies: [
                .product(name: "GeoAlarmKit", package: "geoalarm"),
                .product(name: "GeoAlarmTestSupport", package: "geoalarm"),
            ]
        ),
        // The live path minus the socket, for callgrind: decode, engine, announcer, event line.
        .executableTarget(
            name: "LivePathCost",
            dependencies: [
                "Workload", .product(name: "GeoAlarmKit", package: "geoalarm"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Instructions per fix of LivePathCost under callgrind, against a no-reminder baseline.
        .executableTarget(name: "Instructions", dependencies: ["Workload"]),
        // Start-up time and peak memory of `geoalarm run` with 100 reminders and 1M collection places.
        .executableTarget(
            name: "StartupMemory",
            dependencies: ["Workload", .product(name: "GeoAlarmTestSupport", package: "geoalarm")]
        ),
        // Fixes per second through `replay`'s path (decode + engine) for NMEA and gpsd JSON.
        .executableTarget(
            name: "ReplayThroughput",
            dependencies: [
                "Workload", .product(name: "GeoAlarmKit", package: "geoalarm"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Delay from gpsd's report being read to its event lines being written, on a real gpsd.
        .executableTarget(
            name: "LiveLatency",
            dependencies: [
                "Workload",
                .product(name: "GeoAlarmKit", package: "geoalarm"),
                .product(name: "GeoAlarmTestSupport", package: "geoalarm"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // GeoClue's updates on a replayed commute with geoalarm's thresholds, against thresholds of 0.
        .executableTarget(
            name: "GeoClueUpdates",
            dependencies: ["Workload", .product(name: "GeoAlarmKit", package: "geoalarm")]
        ),
        // Wake-ups, CPU and memory of `geoalarm run` against gpxlogger on the same gpsd.
        .executableTarget(
            name: "Wakeups",
            dependencies: ["Workload", .product(name: "GeoAlarmTestSupport", package: "geoalarm")]
        ),
        // Time from SIGTERM to the end of `geoalarm run`, against gpxlogger on the same gpsd.
        .executableTarget(
            name: "StopLatency",
            dependencies: ["Workload", .product(name: "GeoAlarmTestSupport", package: "geoalarm")]
        ),
        // geoalarm tracking 1 to 10,000 OwnTracks devices through a private mosquitto.
        .executableTarget(
            name: "MQTTScale",
            dependencies: [
                "Workload",
                .product(name: "GeoAlarmKit", package: "geoalarm"),
                .product(name: "GeoAlarmTestSupport", package: "geoalarm"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A burst of OwnTracks locations taken by the agent, against the OwnTracks Recorder.
        .executableTarget(
            name: "MQTTIngest",
            dependencies: [
                "Workload", .product(name: "GeoAlarmKit", package: "geoalarm"), .product(name: "GeoAlarmTestSupport", package: "geoalarm"),
            ]
        ),
        // A look at a CalDAV task list of 1,000 tasks against vdirsyncer's sync; idle wake-ups with a list.
        .executableTarget(
            name: "TaskListPoll", dependencies: ["Workload", .product(name: "GeoAlarmTestSupport", package: "geoalarm")]
        ),
        // A task list of 10,000 tasks read by `geoalarm check`, against todoman on the same folder.
        .executableTarget(
            name: "TaskListLoad", dependencies: ["Workload", .product(name: "GeoAlarmTestSupport", package: "geoalarm")]
        ),
        // The engine's cost per fix, grid index against brute force, 1 to 1M fences.
        .executableTarget(
            name: "EngineCost",
            dependencies: [
                "Workload",
                .product(name: "GeoAlarmKit", package: "geoalarm"),
                .product(name: "GeoAlarmTestSupport", package: "geoalarm"),
            ]
        ),
    ]
)
