// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "geoalarm",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "geoalarm", targets: ["geoalarm"]),
        // For the benchmarks package (Benchmarks/), which measures these modules.
        .library(
            name: "GeoAlarmKit",
            targets: [
                "GeoAlarmCore", "GeoAlarmConfig", "GeoAlarmScanners", "GeoAlarmReplay", "GeoAlarmOutput", "GeoAlarmGPSD",
                "GeoAlarmPipeline", "GeoAlarmAgent", "GeoAlarmHooks", "GeoAlarmNotify", "GeoAlarmStore", "GeoAlarmMQTT", "GeoAlarmSystem",
                "GeoAlarmEncoding", "GeoAlarmOwnTracks", "GeoAlarmICalendar", "GeoAlarmTasks", "GeoAlarmListCache", "GeoAlarmGeoClue",
            ]),
        // Every parser, for the fuzzing package (Fuzz/).
        .library(
            name: "GeoAlarmParsers",
            targets: [
                "GeoAlarmCore", "GeoAlarmScanners", "GeoAlarmReplay", "GeoAlarmConfig", "GeoAlarmOwnTracks", "GeoAlarmMap", "GeoAlarmICalendar", "GeoAlarmTasks",
                "GeoAlarmWebDAV", "GeoAlarmTOML", "GeoAlarmMQTT",
            ]),
        // Process and gpsfake helpers shared by the tests and the benchmarks.
        .library(name: "GeoAlarmTestSupport", targets: ["GeoAlarmTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-numerics.git", from: "1.1.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // Pure geofencing logic: no C, no I/O, no clock reads.
        .target(name: "GeoAlarmCore", dependencies: [.product(name: "RealModule", package: "swift-numerics")]),
        // System calls, retried on EINTR, failing with typed errors: the one place that reads errno;
        // and the system's time zone, for the core's local dates.
        .target(name: "GeoAlarmSystem", dependencies: ["CSystem", "GeoAlarmCore"]),
        // Linux headers the Glibc module leaves out (pidfd, eventfd, inotify): includes only.
        .systemLibrary(name: "CSystem"),
        // Tasks as iCalendar objects: the model, its reader, its line-preserving editor and the
        // recurrence of repeating tasks. Pure: no I/O (the zones come in from the caller).
        .target(name: "GeoAlarmICalendar", dependencies: ["GeoAlarmCore"]),
        // Task lists as a second source of reminders: the vdir (a folder of .ics files), the
        // writes to it, the lists' settings and what they gave.
        .target(
            name: "GeoAlarmTasks",
            dependencies: ["GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmICalendar", "GeoAlarmListCache", "GeoAlarmSystem"]
        ),
        // The copies of servers' task lists and the writes waiting for them, as opaque objects by
        // address: the port the state file keeps them behind, knowing no task model.
        .target(name: "GeoAlarmListCache"),
        // TOML 1.0, read for config files (never trapping, keeping where everything was written),
        // and the rules every reader of the file's tables shares (typed values, problems with lines).
        .target(name: "GeoAlarmTOML", dependencies: ["GeoAlarmCore"]),
        // Adapter: the TOML reminders file, the collection files and the task lists it names.
        .target(
            name: "GeoAlarmConfig",
            dependencies: [
                "GeoAlarmCore", "GeoAlarmICalendar", "GeoAlarmListCache", "GeoAlarmScanners", "GeoAlarmSystem", "GeoAlarmTasks", "GeoAlarmTOML",
            ]
        ),
        // Adapter: recorded tracks (NMEA 0183, gpsd JSON, GPX) as fix sources.
        .target(name: "GeoAlarmReplay", dependencies: ["GeoAlarmCore", "GeoAlarmScanners", "GeoAlarmSystem"]),
        // Byte-level JSON and XML pull readers and exact decimal reading, for tracks and collection files alike.
        .target(name: "GeoAlarmScanners"),
        // The one path of every fix: the undated rule, engine, announcer, state, then the sinks
        // (the state and the sinks through the core's protocols).
        .target(name: "GeoAlarmPipeline", dependencies: ["GeoAlarmCore"]),
        // libgps, through a shim that hides its API versions.
        .systemLibrary(name: "CGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        // Adapter: live fixes from gpsd.
        .target(name: "GeoAlarmGPSD", dependencies: ["GeoAlarmCore", "GeoAlarmSystem", "CGPS"]),
        // The live agent: a lifecycle service joining gpsd, the engine and the sinks.
        .target(
            name: "GeoAlarmAgent",
            dependencies: [
                "GeoAlarmCalDAV", "GeoAlarmCore", "GeoAlarmConfig", "GeoAlarmEncoding", "GeoAlarmICalendar", "GeoAlarmListCache", "GeoAlarmOwnTracks", "GeoAlarmPipeline",
                "GeoAlarmStore", "GeoAlarmSystem", "GeoAlarmTasks", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // libnotify and the bit of GLib it needs: a header that includes it and checks its API version.
        // Not linked (no pkg-config, no `link`): loaded when pop-ups start (LibNotify), so a
        // headless agent maps neither it nor GLib. Its headers come from libnotify-dev (make deps),
        // found where Debian keeps them (`glibHeaders`).
        .systemLibrary(name: "CLibNotify"),
        // Adapter: desktop pop-ups as an event sink.
        .target(
            name: "GeoAlarmNotify",
            dependencies: [
                "GeoAlarmCore", "GeoAlarmSystem", "CLibNotify", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.unsafeFlags(glibHeaders(["gdk-pixbuf-2.0"]))]
        ),
        // libgeoclue-2 and, through it, GLib and GIO: a header that includes it and checks the API
        // versions. Not linked either: loaded when GeoClue is first wanted (LibGeoClue), so an
        // agent that gpsd feeds maps none of them. Its headers come from libgeoclue-2-dev.
        .systemLibrary(name: "CGeoClue"),
        // Adapter: fixes from GeoClue2 (the system bus's location service: Wi-Fi, a phone's modem GPS).
        .target(
            name: "GeoAlarmGeoClue", dependencies: ["GeoAlarmCore", "GeoAlarmSystem", "CGeoClue"],
            swiftSettings: [.unsafeFlags(glibHeaders(["libgeoclue-2.0"]))]
        ),
        // SQLite, through a header that only includes it and checks its version.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Adapter: the SQLite state store (inside/outside per reminder, event history).
        .target(
            name: "GeoAlarmStore",
            dependencies: ["GeoAlarmCore", "GeoAlarmSystem", "GeoAlarmListCache", "CSQLite", .product(name: "Logging", package: "swift-log")]
        ),
        // libmosquitto, through a header that only includes it and checks its version. Not linked
        // (no pkg-config, no `link`): loaded when the first client connects (LibMosquitto), so an
        // agent with no [mqtt] maps neither it nor OpenSSL. Its headers come from libmosquitto-dev.
        .systemLibrary(name: "CMosquitto"),
        // libsodium, through a header that only includes it and checks its version. Not linked:
        // loaded when OwnTracks' encryption is first used (LibSodium), so an agent with no secret
        // never maps it. Its header comes from libsodium-dev (make deps).
        .systemLibrary(name: "CSodium"),
        // OwnTracks: its messages read (as the apps publish them) and written (transitions,
        // locations, regions, the will), sealed and opened with the secrets, which device a topic
        // names, and its keys of [mqtt]; pure but for libsodium's secretbox, and fuzzed without a
        // broker library.
        .target(
            name: "GeoAlarmOwnTracks",
            dependencies: ["GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmScanners", "GeoAlarmSecretBox", "GeoAlarmSystem", "GeoAlarmTOML"]
        ),
        // Adapter: OwnTracks' payload encryption (libsodium's secretbox).
        .target(name: "GeoAlarmSecretBox", dependencies: ["CSodium", "GeoAlarmSystem"]),
        // libcurl, through a header that includes it, checks its version and gives typed forms of
        // its variadic calls, which Swift cannot call.
        // Not linked (no pkg-config, no `link`): loaded at the first request (LibCurl), so an
        // agent with no server task list maps neither it nor the TLS, Kerberos, LDAP and SSH
        // libraries it brings. Its headers come from libcurl4-openssl-dev (make deps).
        .systemLibrary(name: "CCurl"),
        // WebDAV's multistatus answers as CalDAV servers give them: read by the CalDAV client, and
        // fuzzed without libcurl.
        .target(name: "GeoAlarmWebDAV", dependencies: ["GeoAlarmScanners"]),
        // Adapter: CalDAV task lists over HTTP (libcurl on the event loop), their changes and writes.
        .target(
            name: "GeoAlarmCalDAV",
            dependencies: ["CCurl", "GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmListCache", "GeoAlarmSystem", "GeoAlarmTasks", "GeoAlarmWebDAV"]
        ),
        // Adapter: an MQTT broker, its keys of [mqtt], and what goes through it: an outbox, the
        // OwnTracks and Home Assistant sinks over one link, and OwnTracks devices as a fix source.
        .target(
            name: "GeoAlarmMQTT",
            dependencies: [
                "GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmOwnTracks", "GeoAlarmSecretBox", "GeoAlarmStore", "GeoAlarmSystem", "GeoAlarmTOML", "CMosquitto",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Adapter: command hooks (child processes) as an event sink.
        .target(
            name: "GeoAlarmHooks",
            dependencies: [
                "GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmSystem", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The encoders every sink shares: JSON objects, UTC timestamps, and the event schema
        // (EventFormat: an event's text and JSON line, its object), so no sink imports another.
        .target(name: "GeoAlarmEncoding", dependencies: ["GeoAlarmCore"]),
        // Adapter: the stdout log (event lines, in EventFormat) and the commands' listings.
        .target(name: "GeoAlarmOutput", dependencies: ["GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmSystem"]),
        // Adapter: `geoalarm map`, a local web page (its own small HTTP server on the process's
        // event loop) drawing the reminders, the position and the history with Leaflet, and editing them.
        .target(
            name: "GeoAlarmMap",
            dependencies: [
                "GeoAlarmConfig", "GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmICalendar", "GeoAlarmScanners", "GeoAlarmStore",
                "GeoAlarmSystem", "GeoAlarmTasks", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("Page/map.js"), .embedInCode("Page/map.css")]
        ),
        // Argument parsing and wiring only.
        .executableTarget(
            name: "geoalarm",
            dependencies: [
                "GeoAlarmCore", "GeoAlarmConfig", "GeoAlarmReplay", "GeoAlarmOutput", "GeoAlarmGPSD", "GeoAlarmPipeline",
                "GeoAlarmAgent", "GeoAlarmHooks", "GeoAlarmNotify", "GeoAlarmStore", "GeoAlarmSystem", "GeoAlarmMQTT",
                "GeoAlarmEncoding", "GeoAlarmMap", "GeoAlarmTasks", "GeoAlarmICalendar", "GeoAlarmListCache", "GeoAlarmCalDAV", "GeoAlarmGeoClue", "GeoAlarmTOML",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "GeoAlarmCoreTests",
            dependencies: [
                "GeoAlarmCore", "GeoAlarmTestSupport", .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "GeoAlarmConfigTests", dependencies: ["GeoAlarmConfig", "GeoAlarmICalendar", "GeoAlarmTOML", "GeoAlarmTestSupport"]),
        // The iCalendar reader and writer, the vdir, and task lists as reminders.
        .testTarget(
            name: "GeoAlarmTasksTests",
            dependencies: [
                "GeoAlarmICalendar", "GeoAlarmTasks", "GeoAlarmCore", "GeoAlarmSystem", "GeoAlarmTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        // The WebDAV reader, and the CalDAV client against Radicale and against a hostile server.
        .testTarget(
            name: "GeoAlarmCalDAVTests",
            dependencies: ["GeoAlarmCalDAV", "GeoAlarmCore", "GeoAlarmICalendar", "GeoAlarmListCache", "GeoAlarmSystem", "GeoAlarmTasks", "GeoAlarmTestSupport", "GeoAlarmWebDAV"]
        ),
        // The system-call layer and the event loop.
        .testTarget(
            name: "GeoAlarmAgentTests",
            dependencies: [
                "GeoAlarmAgent", "GeoAlarmCore", "GeoAlarmPipeline", "GeoAlarmStore", "GeoAlarmSystem", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "GeoAlarmEncodingTests", dependencies: ["GeoAlarmEncoding", "GeoAlarmCore"]),
        .testTarget(name: "GeoAlarmGeoClueTests", dependencies: ["GeoAlarmGeoClue", "GeoAlarmCore"]),
        .testTarget(name: "GeoAlarmSecretBoxTests", dependencies: ["GeoAlarmSecretBox"]),
        .testTarget(name: "GeoAlarmOwnTracksTests", dependencies: ["GeoAlarmOwnTracks", "GeoAlarmCore", "GeoAlarmSecretBox"]),
        .testTarget(name: "GeoAlarmSystemTests", dependencies: ["GeoAlarmSystem", "GeoAlarmTestSupport"]),
        .testTarget(name: "GeoAlarmReplayTests", dependencies: ["GeoAlarmReplay", "GeoAlarmTestSupport"]),
        .testTarget(name: "GeoAlarmScannersTests", dependencies: ["GeoAlarmScanners", "GeoAlarmTestSupport"]),
        .testTarget(name: "GeoAlarmOutputTests", dependencies: ["GeoAlarmOutput", "GeoAlarmEncoding", "GeoAlarmCore"]),
        .testTarget(
            name: "GeoAlarmGPSDTests", dependencies: ["GeoAlarmGPSD", "GeoAlarmReplay", "GeoAlarmSystem", "GeoAlarmTestSupport"]),
        // Finds the shared receiver captures for the tests that read them.
        .target(
            name: "GeoAlarmTestSupport",
            dependencies: ["GeoAlarmCore", "GeoAlarmHooks", "GeoAlarmSystem", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Support"
        ),
        .testTarget(
            name: "GeoAlarmStoreTests",
            dependencies: [
                "GeoAlarmStore", "GeoAlarmCore", "GeoAlarmICalendar", "GeoAlarmListCache", "GeoAlarmSystem", "GeoAlarmTestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "GeoAlarmNotifyTests", dependencies: ["GeoAlarmNotify", "GeoAlarmCore"]),
        .testTarget(
            name: "GeoAlarmPipelineTests",
            dependencies: [
                "GeoAlarmPipeline", "GeoAlarmConfig", "GeoAlarmCore", "GeoAlarmStore", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "GeoAlarmMQTTTests",
            dependencies: [
                "GeoAlarmMQTT", "GeoAlarmConfig", "GeoAlarmCore", "GeoAlarmOwnTracks", "GeoAlarmSecretBox", "GeoAlarmStore",
                "GeoAlarmTestSupport",
            ]
        ),
        .testTarget(
            name: "GeoAlarmHooksTests",
            dependencies: [
                "GeoAlarmHooks", "GeoAlarmCore", "GeoAlarmEncoding", "GeoAlarmSystem", "GeoAlarmTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The map's access rules, its data and its changes, and its server over real sockets.
        .testTarget(
            name: "GeoAlarmMapTests",
            dependencies: ["GeoAlarmMap", "GeoAlarmConfig", "GeoAlarmCore", "GeoAlarmStore", "GeoAlarmSystem", "GeoAlarmTestSupport"]
        ),
        // Runs the built `geoalarm` binary end to end.
        .testTarget(
            name: "GeoAlarmCLITests",
            dependencies: ["geoalarm", "GeoAlarmCore", "GeoAlarmStore", "GeoAlarmTestSupport"]
        ),
        // The live agent end to end: a real gpsd fed by gpsfake, signals, systemd units.
        .testTarget(
            name: "GeoAlarmLiveTests",
            dependencies: [
                "geoalarm", "GeoAlarmConfig", "GeoAlarmCore", "GeoAlarmSecretBox", "GeoAlarmStore", "GeoAlarmSystem", "GeoAlarmTestSupport",
            ]
        ),
    ]
)

/// The compiler's flags that find GLib's headers, and those of `libraries` beside them, where
/// Debian installs them: what pkg-config's `--cflags` says, without the `--libs` that a
/// `pkgConfig` system library would link, for libraries loaded on use. GLib's `glibconfig.h` is
/// in the machine's multiarch folder.
func glibHeaders(_ libraries: [String]) -> [String] {
    #if arch(x86_64)
    let multiarch = "x86_64-linux-gnu"
    #elseif arch(arm64)
    let multiarch = "aarch64-linux-gnu"
    #elseif arch(arm)
    let multiarch = "arm-linux-gnueabihf"
    #elseif arch(i386)
    let multiarch = "i386-linux-gnu"
    #else
    let multiarch = "unknown"
    #endif
    let folders = libraries.map { "/usr/include/\($0)" } + ["/usr/include/glib-2.0", "/usr/lib/\(multiarch)/glib-2.0/include"]
    return folders.flatMap { ["-Xcc", "-I\($0)"] }
}
