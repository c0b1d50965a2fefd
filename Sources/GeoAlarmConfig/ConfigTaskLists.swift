import FoundationEssentials
import GeoAlarmCore
import GeoAlarmSystem
import GeoAlarmTasks
import GeoAlarmTOML

/// The `[[tasklist]]` tables: a list's folder or server, and what its tasks announce.
extension ConfigReader {
    /// A `[[tasklist]]`: its name (unique, and its slug no other reminder's or collection's id),
    /// its folder (beside the config when relative), and what a task with only a place announces
    /// (`places` and `hasCollections`: what its tasks' LOCATION may name).
    mutating func readTaskList(
        _ table: TOMLTable, number: Int, usedIDs: inout [String: String], places: [String: Coordinate], hasCollections: Bool
    ) -> TaskListSettings? {
        let context = "tasklist (#\(number))"
        // "password" has its own message.
        checkKeys(of: table, allowed: Self.taskListKeys + ["password"], context: context)
        let before = diagnostics.count
        if table["password"] != nil {
            report(in: table, context, "password", """
                a password is not written in the config: put it in a file only you can read and name it with password_file, \
                or give password_command
                """)
        }
        let name = string(table, "name", context: context)
        if name == nil, table["name"] == nil { report(in: table, context, "name", "missing: how list, status and the map name the list") }
        if let name, name.trimmingWhitespace().isEmpty { report(in: table, context, "name", "is empty") }
        let folder = string(table, "vdir", context: context)
        if let folder, folder.isEmpty { report(in: table, context, "vdir", "is empty") }
        let server = table["url"] == nil ? nil : readServer(table, context: context)
        if table["url"] != nil, table["vdir"] != nil {
            report(in: table, context, "url", "a list is a vdir or a server's collection, not both: give vdir or url")
        } else if table["url"] == nil {
            for key in ["username", "password_file", "password_command", "cafile", "poll"] where table[key] != nil {
                report(in: table, context, key, "only applies to a list on a server (url)")
            }
            if table["vdir"] == nil {
                report(in: table, context, "vdir", """
                    missing: give the folder of the list's .ics files (vdir, as vdirsyncer keeps it) or its CalDAV \
                    collection (url)
                    """)
            }
        }
        var geoTasks: Trigger?
        if let text = string(table, "geo_tasks", context: context) {
            geoTasks = Trigger(parsing: text)
            if geoTasks == nil { report(in: table, context, "geo_tasks", "unknown value \"\(text)\" (use \"arrive\", \"leave\" or \"both\")") }
        }
        var locationTasks: Trigger?
        if let text = string(table, "location_tasks", context: context) {
            locationTasks = Trigger(parsing: text)
            if locationTasks == nil {
                report(in: table, context, "location_tasks", "unknown value \"\(text)\" (use \"arrive\", \"leave\" or \"both\")")
            } else if places.isEmpty, !hasCollections {
                warnings.append(diagnostic(
                    in: table, context, "location_tasks",
                    "there is no [places] table nor [[collection]]: only a task whose LOCATION is a position is a reminder"))
            }
        }
        guard diagnostics.count == before, let name else { return nil }
        let source: TaskListSettings.Source
        if let server {
            source = .server(server)
        } else if let folder {
            source = .vdir(PathParts.resolve(Self.expandingHome(folder), besides: file))
        } else {
            return nil
        }
        let settings = TaskListSettings(name: name, source: source, geoTasks: geoTasks, locationTasks: locationTasks)
        if let first = usedIDs[settings.id] {
            report(in: table, context, "name", "its reminders' ids would start \"\(settings.id)/\", as those of \(first) do: give it another name")
            return nil
        }
        usedIDs[settings.id] = "task list #\(number)"
        return settings
    }

    /// A `[[tasklist]]`'s server: its collection's address, the credentials and how often to look;
    /// nil (reported) when it cannot be used.
    mutating func readServer(_ table: TOMLTable, context: String) -> ServerSettings? {
        let before = diagnostics.count
        guard let url = string(table, "url", context: context) else { return nil }
        if let problem = ServerSettings.urlProblem(url) { report(in: table, context, "url", "\(DisplayText.url(url)) \(problem)") }
        var server = ServerSettings(url: url)
        if let username = string(table, "username", context: context) {
            if username.isEmpty || username.contains(where: \.isNewline) || username.contains("\u{0}") {
                report(in: table, context, "username", "must be one line of text")
            }
            server.username = username
        }
        if let passwordFile = string(table, "password_file", context: context) {
            let resolved = PathParts.resolve(Self.expandingHome(passwordFile), besides: file)
            // Read at each use (a fixed file takes at once), so only its rights are checked here.
            if case .failure(let problem) = PasswordFile.read(resolved), problem.isAboutRights {
                report(in: table, context, "password_file", "\(resolved): \(problem.message)")
            }
            server.passwordFile = resolved
        }
        if let value = table["password_command"] {
            let words = value.array.map { array in (0..<array.count).compactMap { array[$0].string } }
            if let words, let count = value.array?.count, words.count == count, !words.isEmpty, !words[0].isEmpty {
                server.passwordCommand = words
            } else {
                report(in: table, context, "password_command", """
                    must be a non-empty array of strings: the program that prints the password and its arguments, \
                    e.g. ["secret-tool", "lookup", "service", "nextcloud"]
                    """)
            }
        }
        if server.passwordFile != nil, server.passwordCommand != nil {
            report(in: table, context, "password_command", "give password_file or password_command, not both")
        }
        if server.username == nil, server.passwordFile != nil || server.passwordCommand != nil {
            report(in: table, context, "username", "missing: a password needs a username")
        }
        if let cafile = string(table, "cafile", context: context) {
            let resolved = PathParts.resolve(Self.expandingHome(cafile), besides: file)
            if !url.hasPrefix("https://") { report(in: table, context, "cafile", "only applies to an https:// url") }
            if ((try? System.fileStatus(resolved)) ?? nil) == nil {
                report(in: table, context, "cafile", "\(resolved): no such file")
            } else if let problem = FileSafety.notRegularFileProblem(resolved) {
                report(in: table, context, "cafile", "\(resolved) \(problem)")
            }
            server.caFile = resolved
        }
        if let poll = span(table, "poll", context: context) {
            if poll >= ServerSettings.shortestPoll {
                server.poll = poll
            } else {
                report(in: table, context, "poll", "must be at least \(Int(ServerSettings.shortestPoll))s: a server is not asked more often")
            }
        }
        return diagnostics.count == before ? server : nil
    }
}
