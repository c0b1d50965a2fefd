import ArgumentParser
import Foundation
import GeoAlarmConfig
import GeoAlarmCore

/// Runs one locked, validated, atomic edit of the reminders file (starting it from `creating`
/// when it does not exist), or explains why not and exits 1.
private func edit(
    _ path: String, creating: String? = nil, _ change: ([UInt8]) throws(ConfigEditor.EditError) -> [UInt8]
) throws {
    do {
        try ConfigEditor.edit(path: path, creating: creating, change)
    } catch {
        Diagnostics.error(error.description)
        throw ExitCode.failure
    }
}

/// `geoalarm add`: appends a reminder to the config file, keeping the rest of it as it was.
struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add a reminder to the config file (validated first, written atomically, the rest kept byte for byte).")

    @OptionGroup var options: ConfigOptions

    @Option(help: "What to remember.")
    var title: String

    @Option(help: ArgumentHelp("Where: a point.", valueName: "lat,lon"))
    var at: String?

    @Option(help: ArgumentHelp("Where: a name from [places].", valueName: "name"))
    var place: String?

    @Option(help: ArgumentHelp("The circle: metres or \"150m\", \"1km\"...", valueName: "radius"))
    var radius: String?

    @Option(help: ArgumentHelp("arrive, leave or both.", valueName: "when"))
    var when: String?

    @Option(help: "More text for the pop-up.")
    var notes: String?

    @Option(name: .customLong("repeat"), help: ArgumentHelp("always, once or a period such as 12h.", valueName: "repeat"))
    var repetition: String?

    @Option(help: "The reminder's id (default: a slug of the title).")
    var id: String?

    func validate() throws {
        guard at != nil || place != nil else {
            throw ValidationError("Give --at LAT,LON, --place NAME, or both to define the place NAME at LAT,LON.")
        }
    }

    /// The config to add to: the one given or found, else the user's own, made now (its folder
    /// 0700, the file 0600) with a header pointing to the example.
    private func target() throws -> (path: String, creating: String?) {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = options.config {
            return (explicit, FileManager.default.fileExists(atPath: explicit) ? nil : ConfigLocation.newConfigHeader)
        }
        if let found = try? ConfigLocation.resolve(
            explicit: nil, environment: environment, exists: { FileManager.default.fileExists(atPath: $0) }) {
            return (found, nil)
        }
        guard let path = ConfigLocation.userPath(environment: environment) else { return (try options.resolvedPath(), nil) }
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            Diagnostics.error("\(folder): cannot create it: \(error.localizedDescription)")
            throw ExitCode.failure
        }
        return (path, ConfigLocation.newConfigHeader)
    }

    func run() throws {
        let (path, creating) = try target()
        var fields: [(String, String)] = []
        if let id { fields.append(("id", ConfigEditor.quote(id))) }
        fields.append(("title", ConfigEditor.quote(title)))
        if let notes { fields.append(("notes", ConfigEditor.quote(notes))) }
        if let place {
            fields.append(("place", ConfigEditor.quote(place)))
        } else if let at {
            fields.append(("location", ConfigEditor.quote(at)))
        }
        if let radius { fields.append(("radius", ConfigEditor.quote(radius))) }
        if let when { fields.append(("when", ConfigEditor.quote(when))) }
        if let repetition { fields.append(("repeat", ConfigEditor.quote(repetition))) }
        try edit(path, creating: creating) { (bytes) throws(ConfigEditor.EditError) in
            var bytes = bytes
            if let place, let at { bytes = try ConfigEditor.definingPlace(place, at: at, in: bytes, path: path) }
            return ConfigEditor.appendingReminder(fields, to: bytes)
        }
        if creating != nil { print("created \(path)") }
        if let place, at != nil { print("defined place \(place) in \(path)") }
        print("added \(id ?? Reminder.slug(title)) to \(path)")
    }
}

/// `geoalarm remove ID`: deletes that reminder's table from the config file, and nothing else.
struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove a reminder from the config file (the rest kept byte for byte, written atomically).")

    @OptionGroup var options: ConfigOptions

    @Argument(help: ArgumentHelp("The reminder's id (see geoalarm list).", valueName: "id"))
    var id: String

    func run() throws {
        let config = try options.load()
        _ = try position(of: id, in: config)
        try edit(config.path) { (bytes) throws(ConfigEditor.EditError) in
            try ConfigEditor.removingReminder(id: id, from: bytes, path: config.path)
        }
        print("removed \(id) from \(config.path)")
    }
}
