import ArgumentParser
import Foundation
import GeoAlarmConfig
import GeoAlarmCore

/// Validates `text` as the new reminders file and writes it atomically, or explains why not.
private func save(_ text: String, to path: String) throws {
    do {
        _ = try ConfigLoader.parse(text, path: path)
    } catch {
        Diagnostics.error("not changed, the result would be invalid:")
        Diagnostics.report(error)
        throw ExitCode.failure
    }
    do {
        try ConfigEditor.write(text, to: path)
    } catch {
        Diagnostics.error(error.description)
        throw ExitCode.failure
    }
}

/// The current text of the reminders file.
private func currentText(_ path: String) throws -> String {
    do {
        return String(decoding: try UserFile.contents(of: path), as: UTF8.self)
    } catch {
        Diagnostics.error("\(path): cannot read: \(error)")
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
        guard (at == nil) != (place == nil) else { throw ValidationError("Give exactly one of --at LAT,LON and --place NAME.") }
    }

    func run() throws {
        let path = try options.resolvedPath()
        var fields: [(String, String)] = []
        if let id { fields.append(("id", ConfigEditor.quote(id))) }
        fields.append(("title", ConfigEditor.quote(title)))
        if let notes { fields.append(("notes", ConfigEditor.quote(notes))) }
        if let at { fields.append(("location", ConfigEditor.quote(at))) }
        if let place { fields.append(("place", ConfigEditor.quote(place))) }
        if let radius { fields.append(("radius", ConfigEditor.quote(radius))) }
        if let when { fields.append(("when", ConfigEditor.quote(when))) }
        if let repetition { fields.append(("repeat", ConfigEditor.quote(repetition))) }
        try save(ConfigEditor.appendingReminder(fields, to: try currentText(path)), to: path)
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
        let index = try position(of: id, in: config)
        let text: String
        do {
            text = try ConfigEditor.removingReminder(number: index + 1, from: try currentText(config.path))
        } catch {
            Diagnostics.error("\(config.path): \(error)")
            throw ExitCode.failure
        }
        try save(text, to: config.path)
        print("removed \(id) from \(config.path)")
    }
}
