import GeoAlarmConfig
import GeoAlarmEncoding

/// The page: its HTML (with the tiles to draw), its script and style (embedded in the binary),
/// and the headers that keep it to itself.
struct MapPage: Sendable {
    /// The content policy and headers on every answer: scripts, styles and data from this
    /// server only, images also from the tile server, no framing, no referrer.
    let securityHeaders: [(String, String)]

    init(settings: MapSettings) {
        let images = ["'self'", "data:"] + (settings.tileOrigin.map { [$0] } ?? [])
        securityHeaders = [
            ("Content-Security-Policy", """
                default-src 'none'; script-src 'self'; style-src 'self'; img-src \(images.joined(separator: " ")); \
                connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'
                """),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
        ]
    }

    static var script: [UInt8] { PackageResources.map_js }
    static var style: [UInt8] { PackageResources.map_css }

    /// The page: public, it holds no secret (the token comes from the address's `#` part).
    func html(settings: MapSettings) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>geoalarm map</title>
        <meta name="geoalarm-tiles" content="\(MarkupText.escaped(settings.tiles ?? ""))">
        <meta name="geoalarm-attribution" content="\(MarkupText.escaped(settings.attribution))">
        <link rel="stylesheet" href="/leaflet/leaflet.css">
        <link rel="stylesheet" href="/map.css">
        </head>
        <body>
        <div id="map"></div>
        <aside id="panel">
        <h1>geoalarm</h1>
        <p id="status">Loading…</p>
        <p id="message" role="alert" hidden></p>
        <p class="hint">Click the map to add a reminder there; drag a reminder's centre to move it, the handle on its edge to change its radius.</p>
        <h2>Reminders</h2>
        <ul id="reminders"></ul>
        <p id="more" hidden>Zoom in to see more places</p>
        <h2>Recent arrivals and departures</h2>
        <ol id="history"></ol>
        </aside>
        <script src="/leaflet/leaflet.js"></script>
        <script src="/map.js"></script>
        </body>
        </html>

        """
    }
}
