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

    public init(id: String, template: Reminder, places: [CollectionPlace]) {
        self.id = id
        self.template = template
        self.places = places
    }

    /// The reminder of the place at `index` (0-based): the template with its id, title, name and geometry.
    public func member(_ index: Int) -> Reminder {
        let place = places[index]
        var reminder = template
        reminder.id = "\(id)/\(index + 1)"
        let name = place.name.isEmpty ? "#\(index + 1)" : place.name
        reminder.title = template.title.replacing("{name}", with: name)
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

    /// The index of the place a member id (`ID/n`) names, or nil when it names none of this collection's.
    public func memberIndex(of memberID: String) -> Int? {
        guard memberID.hasPrefix(id), memberID.dropFirst(id.count).first == "/",
              let number = Int(memberID.dropFirst(id.count + 1)), (1...places.count).contains(number)
        else { return nil }
        return number - 1
    }
}
