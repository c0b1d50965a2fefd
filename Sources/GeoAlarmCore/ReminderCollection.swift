import Foundation

/// One place of a collection: where it is, how wide its circle is (or its area), and what it is called.
public struct CollectionPlace: Sendable, Equatable {
    /// A circle's centre; an area's middle.
    public var center: Coordinate
    /// Metres from the centre that count as inside (0 for an area).
    public var radius: Double
    /// The place's own name; empty when the file gave none.
    public var name: String
    /// The polygon that is this place instead of a circle, when the file gave one.
    public var area: Area?

    public init(center: Coordinate, radius: Double, name: String = "") {
        self.center = center
        self.radius = radius
        self.name = name
    }

    /// A place that is an area.
    public init(area: Area, name: String = "") {
        self.init(center: area.center, radius: 0, name: name)
        self.area = area
    }
}

/// Many places that share one reminder's title, trigger, alert and schedule (a `[[collection]]`).
///
/// A million places must stay cheap, so each is kept as a plain ``CollectionPlace`` (40 bytes
/// plus a long name's storage) and a full ``Reminder`` is made only for a place that is
/// announced or asked about. Place number `n` (1-based, in file order) has the id `ID/n`.
public struct ReminderCollection: Sendable, Equatable {
    /// Unique among reminders and collections.
    public var id: String
    /// What every place shares: `title` may hold `{name}`; `center`, `radius` and `placeName` are unused.
    public var template: Reminder
    public var places: [CollectionPlace]

    public init(id: String, template: Reminder, places: [CollectionPlace]) {
        self.id = id
        self.template = template
        self.places = places
    }

    /// The reminder of the place at `index` (0-based): the template with its id, title, centre and radius.
    public func member(_ index: Int) -> Reminder {
        let place = places[index]
        var reminder = template
        reminder.id = "\(id)/\(index + 1)"
        let name = place.name.isEmpty ? "#\(index + 1)" : place.name
        reminder.title = template.title.replacingOccurrences(of: "{name}", with: name)
        reminder.placeName = place.name.isEmpty ? nil : place.name
        reminder.center = place.center
        reminder.radius = place.radius
        reminder.area = place.area
        return reminder
    }

    /// The circle and timing of the place at `index` (an area's is made by the engine, which numbers them).
    public func shape(_ index: Int) -> FenceShape {
        let place = places[index]
        return FenceShape(center: place.center, radius: place.radius, hysteresis: template.hysteresis, dwell: template.dwell)
    }

    /// Metres from `point` to the nearest place (a circle's centre, an area's edge, 0 inside
    /// one); nil when there are no places.
    public func nearestDistance(from point: Coordinate) -> Double? {
        let origin = Haversine.Origin(point)
        var tested = 0
        return places.lazy.map { place in
            place.area?.distance(from: point, tested: &tested) ?? origin.distance(to: place.center)
        }.min()
    }

    /// The index of the place a member id (`ID/n`) names, or nil when it names none of this collection's.
    public func memberIndex(of memberID: String) -> Int? {
        guard memberID.hasPrefix(id), memberID.dropFirst(id.count).first == "/",
              let number = Int(memberID.dropFirst(id.count + 1)), (1...places.count).contains(number)
        else { return nil }
        return number - 1
    }
}
