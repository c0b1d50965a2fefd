import Foundation
import GeoAlarmStore
import GeoAlarmTestSupport
import Testing

/// The Reminders verbs on a config with comments, and the state file behind them.
struct LifecycleCommandTests {
    static let commented = """
        # My reminders. Comments, spacing and order must survive every edit.

        [defaults]
        radius = "60m"   # generous: the receiver is old

        [places]
        home = { lat = 38.71390, lon = -9.13340 }  # the flat

        # Groceries
        [[reminder]]
        id = "bread"
        title = "Buy bread"
        location = "38.71050,-9.13660"

        # Work
        [[reminder]]
        id = "parcel"
        title = "Pick up the parcel"
        location = "38.70790,-9.13650"
        when = "both"   # both ways

        [[reminder]]
        title = "Water the plants"
        place = "home"
        when = "leave"

        """

    @Test func addListCompleteStatusRemoveKeepEveryOtherByte() throws {
        let config = try Command.temporaryFile(Self.commented)
        let state = Command.scratchState()
        let added = try Command.run(["add", "-c", config, "--title", "Post the letter", "--at", "38.7100,-9.1350",
                                     "--radius", "40m", "--when", "both", "--notes", "Stamps in the drawer", "--repeat", "once"])
        #expect(added.status == 0, "\(added.stderr)")
        let afterAdd = try String(contentsOfFile: config, encoding: .utf8)
        #expect(afterAdd.hasPrefix(Self.commented), "everything before is kept byte for byte")
        #expect(try Command.run(["check", "-c", config]).status == 0)

        let listed = try Command.run(["list", "-c", config, "--state", state])
        #expect(listed.stdoutLines.contains { $0.hasPrefix("post-the-letter ") })

        #expect(try Command.run(["complete", "post-the-letter", "-c", config, "--state", state]).status == 0)
        let completedAt = try #require(try StateStore(readingFrom: state)?.lifecycles.all()["post-the-letter"]?.completedAt)
        let again = try Command.run(["complete", "post-the-letter", "-c", config, "--state", state])
        #expect(again.status == 0 && again.stdout.wholeMatch(
            of: /post-the-letter \("Post the letter"\) was already completed, at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/) != nil,
                "\(again.stdout)")
        #expect(try StateStore(readingFrom: state)?.lifecycles.all()["post-the-letter"]?.completedAt == completedAt, "the first completion stands")
        let hidden = try Command.run(["list", "-c", config, "--state", state])
        #expect(!hidden.stdoutLines.contains { $0.hasPrefix("post-the-letter ") }, "completed reminders are hidden")
        let all = try Command.run(["list", "-c", config, "--state", state, "--all"])
        #expect(all.stdoutLines.contains { $0.hasPrefix("post-the-letter ") && $0.hasSuffix("(completed)") })
        let status = try Command.run(["status", "-c", config, "--state", state])
        #expect(status.stdoutLines.contains { $0.hasPrefix("post-the-letter ") && $0.contains(#/completed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /#) },
                "a completion to the second: \(status.stdout)")
        let snoozed = try Command.run(["snooze", "bread", "2h", "-c", config, "--state", state]).stdout
        #expect(snoozed.wholeMatch(of: /snoozed bread until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)\n/) != nil,
                "a time to the second: \(snoozed)")
        let untilEvening = try Command.run(["snooze", "bread", "18:30", "-c", config, "--state", state], environment: ProcessInfo.processInfo.environment.merging(["TZ": "UTC"]) { $1 }).stdout
        #expect(untilEvening.wholeMatch(of: /snoozed bread until \d{4}-\d\d-\d\dT18:30:00Z\n/) != nil, "until a time of day: \(untilEvening)")
        // Answered on the clock it was typed on: 18:30 in Berlin, not 16:30 or 17:30 UTC.
        let inBerlin = try Command.run(["snooze", "bread", "18:30", "-c", config, "--state", state],
                                       environment: ProcessInfo.processInfo.environment.merging(["TZ": "Europe/Berlin"]) { $1 }).stdout
        #expect(inBerlin.wholeMatch(of: /snoozed bread until \d{4}-\d\d-\d\dT18:30:00\+0[12]:00\n/) != nil, "in local time: \(inBerlin)")
        let passed = try Command.run(["snooze", "bread", "2020-01-01T08:00", "-c", config, "--state", state])
        #expect(passed.status == 64 && passed.stderr.hasPrefix("Error: 2020-01-01T08:00: 2020-01-01T08:00 has passed; expected a duration"),
                "\(passed.stderr)")
        // The table on the same clock: the snooze typed as 18:30 in Berlin shows as 18:30 there.
        let statusInBerlin = try Command.run(["status", "-c", config, "--state", state],
                                             environment: ProcessInfo.processInfo.environment.merging(["TZ": "Europe/Berlin"]) { $1 })
        #expect(statusInBerlin.stdoutLines.contains { $0.hasPrefix("bread ") && $0.contains(#/snoozed until \d{4}-\d\d-\d\dT18:30:00\+0[12]:00 /#) },
                "\(statusInBerlin.stdout)")
        #expect(try Command.run(["snooze", "bread", "0", "-c", config, "--state", state]).stdoutLines == ["bread is no longer snoozed"])
        #expect(try Command.run(["snooze", "bread", "0", "-c", config, "--state", state]).stdoutLines == ["bread was not snoozed"])
        #expect(try StateStore(readingFrom: state)?.lifecycles.all()["bread"]?.snoozedUntil == nil)
        #expect(try Command.run(["uncomplete", "post-the-letter", "-c", config, "--state", state]).status == 0)
        #expect(try Command.run(["uncomplete", "post-the-letter", "-c", config, "--state", state]).stdoutLines == [
            "post-the-letter (\"Post the letter\") is not completed",
        ])
        #expect(try Command.run(["list", "-c", config, "--state", state]).stdoutLines.contains { $0.hasPrefix("post-the-letter ") })

        let removed = try Command.run(["remove", "post-the-letter", "-c", config])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try String(contentsOfFile: config, encoding: .utf8) == Self.commented, "add then remove gives the file back, byte for byte")

        // Removing one in the middle takes its lines and nothing else: the comment above the next one stays.
        #expect(try Command.run(["remove", "bread", "-c", config]).status == 0)
        let expected = Self.commented.replacingOccurrences(of: """
            [[reminder]]
            id = "bread"
            title = "Buy bread"
            location = "38.71050,-9.13660"

            """, with: "")
        #expect(try String(contentsOfFile: config, encoding: .utf8) == expected)
    }

    @Test func removeForgetsTheRemindersStateButKeepsItsHistory() throws {
        let config = try Command.temporaryFile(Self.commented)
        let state = Command.scratchState()
        #expect(try Command.run(["replay", "-c", config, "--state", state, "config/demo/walk.nmea"]).status == 0)
        #expect(try Command.run(["complete", "bread", "-c", config, "--state", state]).status == 0)
        let events = try Command.run(["history", "-c", config, "--state", state, "--reminder", "bread"]).stdoutLines.count
        #expect(events > 0, "the walk passes the bakery")

        let removed = try Command.run(["remove", "bread", "-c", config, "--state", state])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdoutLines == [
            "removed bread from \(config)", "forgot its state in \(state); its \(events) past events stay in the history",
        ])
        // Added again, it starts afresh: not completed, and its old events are still there.
        #expect(try Command.run(["add", "-c", config, "--id", "bread", "--title", "Buy bread", "--at", "38.71050,-9.13660"]).status == 0)
        #expect(try Command.run(["list", "-c", config, "--state", state]).stdoutLines.contains { $0.hasPrefix("bread ") })
        #expect(try Command.run(["history", "-c", config, "--state", state]).stdoutLines.filter { $0.contains("  bread  ") }.count == events)
    }

    @Test func editsThatWouldBreakTheFileAreRefusedAndNothingIsWritten() throws {
        let config = try Command.temporaryFile(Self.commented)
        let clash = try Command.run(["add", "-c", config, "--id", "bread", "--title", "More bread", "--at", "1,2"])
        #expect(clash.status == 1)
        #expect(clash.stderr.contains("reminder \"bread\" (#4): id: duplicate id \"bread\" (first used by reminder #1)"))
        let badPlace = try Command.run(["add", "-c", config, "--title", "X", "--place", "office"])
        #expect(badPlace.stderr.contains("unknown place \"office\""))
        let unknown = try Command.run(["remove", "nope", "-c", config])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no reminder \"nope\""))
        let both = try Command.run(["add", "-c", config, "--title", "X", "--place", "home", "--at", "1,2"])
        #expect(both.status != 0)
        #expect(try String(contentsOfFile: config, encoding: .utf8).hasPrefix(Self.commented))
    }

    /// Milk at two shops: `add` with a title another reminder has writes a numbered id, and says
    /// which (an id given with --id that is taken is refused, as above).
    @Test func addingATitleTwiceNumbersTheSecondId() throws {
        let config = try Command.temporaryFile("")
        for (shop, id) in [("38.70,-9.10", "buy-milk"), ("38.71,-9.11", "buy-milk-2"), ("38.72,-9.12", "buy-milk-3")] {
            let add = try Command.run(["add", "-c", config, "--title", "Buy milk", "--at", shop])
            #expect(add.status == 0 && add.stdoutLines == ["added \(id) to \(config)"], "\(add.stdout)\(add.stderr)")
        }
        let list = try Command.run(["list", "-c", config, "--json"])
        #expect(list.stdoutLines.count == 3 && list.stdoutLines.allSatisfy { $0.contains(#""title":"Buy milk""#) }, "\(list.stdout)")
        let written = try String(contentsOfFile: config, encoding: .utf8)
        #expect(!written.contains(#"id = "buy-milk""# + "\n") && written.contains(#"id = "buy-milk-3""#),
                "the first keeps the id its title gives: \(written)")
    }

    /// A title typed with the keyboard's layout switched in a word gives an id that only looks
    /// like its words: `add` says so at once, as every later command does.
    @Test func addWarnsOfAnIdWhoseWordMixesScripts() throws {
        let config = try Command.temporaryFile("")
        let add = try Command.run(["add", "-c", config, "--title", "Хлеб и м\u{6F}локо", "--at", "55.75,37.62"])
        #expect(add.status == 0 && add.stdoutLines == ["added хлеб-и-м\u{6F}локо to \(config)"], "\(add.stdout)")
        #expect(add.stderr.hasPrefix("geoalarm: warning: \(config):1: reminder \"хлеб-и-м\u{6F}локо\" (#1): id: ")
                    && add.stderr.contains("has Latin o (U+006F) among Cyrillic letters in one word"), "\(add.stderr)")
        let plain = try Command.run(["add", "-c", try Command.temporaryFile(""), "--title", "Хлеб и молоко", "--at", "55.75,37.62"])
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
    }

    @Test func timeAlarmsAreListedAndRemovedLikeTheOthers() throws {
        let config = try Command.temporaryFile(Self.commented + "\n[[reminder]]\nid = \"call\"\ntitle = \"Call mum\"\nat = \"2026-12-24T16:00\"\n\n# the end\n")
        let state = Command.scratchState()
        #expect(try Command.run(["list", "-c", config, "--state", state]).stdoutLines.contains { $0.hasPrefix("call ") && $0.contains("at 2026-12-24 16:00") })
        #expect(try Command.run(["remove", "parcel", "-c", config]).status == 0)
        #expect(try Command.run(["remove", "call", "-c", config]).status == 0)
        let left = try String(contentsOfFile: config, encoding: .utf8)
        #expect(!left.contains("Call mum") && !left.contains("id = \"parcel\"") && left.contains("# the end") && left.contains("Water the plants"))
    }

    @Test func aOnceReminderAnnouncesOnlyItsFirstEventInReplay() throws {
        let demo = try String(contentsOf: Command.root.appendingPathComponent("config/demo.toml"), encoding: .utf8)
        let config = try Command.temporaryFile(demo.replacingOccurrences(of: "when = \"both\"\n", with: "when = \"both\"\nrepeat = \"once\"\n"))
        let replay = try Command.run(["replay", "-c", config, "config/demo/walk.nmea"])
        #expect(replay.stdoutLines.filter { $0.contains("  parcel  ") }.count == 1)
        #expect(replay.stderr.contains("(1 more not announced by their schedule)"))
    }
}

/// What a command prints of a title is one line, its control characters escaped: a title from
/// a synced list someone else writes to cannot move the cursor or forge a line.
struct PrintedTitleTests {
    @Test func aTitleWithControlCharactersIsPrintedEscaped() throws {
        let config = try Command.temporaryFile(
            "[[reminder]]\nid = \"bread\"\ntitle = \"Buy\\nbread\\u001B[31m\"\nlocation = \"38.7105,-9.1366\"\n")
        let completed = try Command.run(["complete", "bread", "-c", config, "--state", Command.scratchState()])
        #expect(completed.status == 0, "\(completed.stderr)")
        #expect(completed.stdoutLines == ["completed bread (\"Buy\\nbread\\u{1B}[31m\")"], "\(completed.stdout)")
    }
}
