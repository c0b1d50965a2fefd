/// The `[map]` table: what `geoalarm map` draws under the reminders.
public struct MapSettings: Sendable, Equatable {
    /// `tiles`: a tile URL template (`{z}`, `{x}`, `{y}`, and `{s}` for a server letter if the
    /// service has several); nil (`tiles = ""`): no tiles, the reminders on a plain background.
    public var tiles: String?
    /// `attribution`: the credit the tiles' licence asks for, shown in the map's corner.
    public var attribution: String

    public init(tiles: String?, attribution: String) {
        self.tiles = tiles
        self.attribution = attribution
    }

    /// OpenStreetMap's standard tiles, with the credit their usage policy asks for.
    public static let openStreetMap = MapSettings(
        tiles: "https://tile.openstreetmap.org/{z}/{x}/{y}.png", attribution: "© OpenStreetMap contributors")

    /// Why `template` cannot be a tile URL template, or nil when it can: an http or https URL
    /// with `{z}`, `{x}` and `{y}` and nothing a browser's content policy or a page could
    /// misread (spaces, quotes, angle brackets, semicolons).
    public static func problem(withTiles template: String) -> String? {
        guard template.hasPrefix("https://") || template.hasPrefix("http://") else {
            return "must be an http:// or https:// URL template, or \"\" for none"
        }
        if let bad = template.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F || "\"'<>;\\`".unicodeScalars.contains($0) }) {
            return "has a character a URL cannot hold as written (\(bad.escaped(asASCII: true)))"
        }
        let missing = ["{z}", "{x}", "{y}"].filter { !template.contains($0) }
        guard missing.isEmpty else { return "lacks \(missing.joined(separator: ", ")): a tile URL template names the zoom and the tile" }
        return nil
    }

    /// The scheme, host and port the tiles come from (`https://tile.openstreetmap.org`), for
    /// the page's content policy; a `{s}` server letter becomes `*`.
    public var tileOrigin: String? {
        guard let tiles, let schemeEnd = tiles.firstRange(of: "://") else { return nil }
        let rest = tiles[schemeEnd.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" }
        return String(tiles[..<schemeEnd.upperBound]) + String(host).replacing("{s}", with: "*")
    }
}
