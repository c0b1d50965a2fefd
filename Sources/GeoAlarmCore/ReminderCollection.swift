import FoundationEssentials

/// One place of a collection: where it is (a circle or an area) and what it is called.
public struct CollectionPlace: Sendable, Equatable {
    public var geometry: FenceGeometry
    /// The place's own name; empty when the file gave none.
    public var name: String

    public init(geometry: FenceGeometry, name: String = "") {
        self.geometry = geometry
        self.name = name
    }
}

/// Many places that share one reminder's title, trigger, alert and schedule (a `[[collection]]`).
///
/// A million places must stay cheap, so each is kept as a plain ``CollectionPlace`` (48 bytes
/// plus a long name's storage) and a full ``Reminder`` is made only for a place that is
/// announced or asked about. Place number `n` (1-based, in file order) has the id `ID/n`.
public struct ReminderCollection: Sendable, Equatable {
    /// Unique among reminders and collections.
    public var id: String
    /// What every place shares: `title` may hold `{name}`; its geometry and `placeName` are unused.
    public var template: Reminder
    public var places: [CollectionPlace]
    /// Whether `{name}` in the template's title stands for each place's name, as a
    /// `[[collection]]`'s title is written; false for a task's own words (another member of a
    /// shared list wrote them), shown as they are.
    public var titleNamesPlace: Bool

    public init(id: String, template: Reminder, places: [CollectionPlace], titleNamesPlace: Bool = true) {
        self.id = id
        self.template = template
        self.places = places
        self.titleNamesPlace = titleNamesPlace
    }

    /// The reminder of the place at `index` (0-based): the template with its id, title, name and geometry.
    public func member(_ index: Int) -> Reminder {
        let place = places[index]
        var reminder = template
        reminder.id = "\(id)/\(index + 1)"
        let name = place.name.isEmpty ? "#\(index + 1)" : place.name
        if titleNamesPlace { reminder.title = template.title.replacing("{name}", with: name) }
        reminder.placeName = place.name.isEmpty ? nil : place.name
        reminder.geometry = place.geometry
        return reminder
    }

    /// Metres from `point` to the nearest place (a circle's centre, an area's edge, 0 inside
    /// one); nil when there are no places.
    public func nearestDistance(from point: Coordinate) -> Double? {
        let origin = Haversine.Origin(point)
        return places.lazy.map { $0.geometry.distance(from: origin) }.min()
    }

    /// The index of the place a member id (`ID/n`) names, or nil when it names none of this
    /// collection's. Only the id ``member(_:)`` gives counts: `n` written in decimal digits
    /// without a sign or a leading zero (`places/01` and `places/+1` name nothing), so that a
    /// place has one id, and its lifecycle one row.
    public func memberIndex(of memberID: String) -> Int? {
        guard memberID.hasPrefix(id), memberID.dropFirst(id.count).first == "/" else { return nil }
        guard let number = Self.placeNumber(memberID.utf8.dropFirst(id.utf8.count + 1)), number <= places.count else { return nil }
        return number - 1
    }

    /// The number `digits` (what follows `ID/`) write as ``member(_:)`` writes a place's: decimal
    /// digits without a sign or a leading zero; nil for any other text.
    private static func placeNumber(_ digits: Substring.UTF8View) -> Int? {
        guard let first = digits.first, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first), digits.count <= 18,
              digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    /// The collection of `collections` that `words` name: its id itself, else the first in order
    /// whose id differs only in case, spacing and accents ("Supermarkets" names `supermarkets`),
    /// as ``NamedPlaces`` finds a place; nil when none does.
    public static func named(_ words: String, among collections: [ReminderCollection]) -> ReminderCollection? {
        if let exact = collections.first(where: { $0.id == words }) { return exact }
        let slug = Reminder.slug(words)
        guard !slug.isEmpty else { return nil }
        return collections.first { Reminder.slug($0.id) == slug }
    }

    /// The place number a member id (`ID/n`) ends in, as ``member(_:)`` writes it; nil for another id.
    public static func placeNumber(of id: String) -> Int? {
        guard let slash = id.lastIndex(of: "/") else { return nil }
        return placeNumber(id.utf8[id.utf8.index(after: slash)...])
    }

    /// The id of the collection whose place `id` is (`shops` of `shops/12`); nil for an id that
    /// is no place's: one without a `/` and a place's number after it, as ``memberIndex(of:)``
    /// reads one (a task's, `errands/milk`; a time alarm's, `errands/milk/time-1`).
    public static func collectionID(ofPlace id: String) -> String? {
        guard placeNumber(of: id) != nil, let slash = id.lastIndex(of: "/") else { return nil }
        return String(id[..<slash])
    }

    /// The id `id` takes when the reminders of `newIDs` (old id to new: a task list renamed, a
    /// task moved to another) are renamed: its own new id, or, for a place or time alarm of one
    /// (`old/3`, `old/time-1`), the same under the new (`new/3`); nil when neither is renamed.
    public static func renamedID(_ id: String, by newIDs: [String: String]) -> String? {
        if let new = newIDs[id] { return new }
        guard let slash = id.lastIndex(of: "/"), let new = newIDs[String(id[..<slash])] else { return nil }
        return new + id[slash...]
    }

    /// Moves each of `values` whose key ``renamedID(_:by:)`` renames to its new key (over a value
    /// the new key had).
    public static func rename<Value>(_ values: inout [String: Value], by newIDs: [String: String]) {
        guard !newIDs.isEmpty else { return }
        let moved = values.compactMap { id, value in renamedID(id, by: newIDs).map { (id, $0, value) } }
        for (old, _, _) in moved { values[old] = nil }
        for (_, new, value) in moved { values[new] = value }
    }

    /// The ids of its places, said briefly: `places/1` or `places/1 to places/2500`.
    public var memberIDRange: String {
        switch places.count {
        case 0: "none"
        case 1: "\(id)/1"
        default: "\(id)/1 to \(id)/\(places.count)"
        }
    }
}
