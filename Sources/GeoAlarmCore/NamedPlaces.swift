/// The config's `[places]`, found by a name as a person writes it: the key itself, or words
/// that differ from it only in case, spacing, punctuation and accents ("Post office" names
/// `post_office`, as a task's `LOCATION` or `add --place` may write it). Of two keys alike so,
/// the first in order.
public struct NamedPlaces: Sendable {
    private let coordinates: [String: Coordinate]
    /// Each key by its slug (``Reminder/slug(_:)``).
    private let keysBySlug: [String: String]

    public init(_ places: [String: Coordinate]) {
        coordinates = places
        var keys: [String: String] = [:]
        for key in places.keys.sorted() {
            let slug = Reminder.slug(key)
            if !slug.isEmpty, keys[slug] == nil { keys[slug] = key }
        }
        keysBySlug = keys
    }

    /// The place `words` name, with its key; nil when none does.
    public func place(named words: String) -> (key: String, coordinate: Coordinate)? {
        if let coordinate = coordinates[words] { return (words, coordinate) }
        guard let key = keysBySlug[Reminder.slug(words)], let coordinate = coordinates[key] else { return nil }
        return (key, coordinate)
    }

    /// Every key, in order (for a message that lists them).
    public var keys: [String] { coordinates.keys.sorted() }
}
