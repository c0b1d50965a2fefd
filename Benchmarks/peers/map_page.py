#!/usr/bin/env python3
"""map_page.py GEOALARM WORK: how fast `geoalarm map` is, against baselines measured in the same run.

1. Time to a working page: from the start of navigation until the page has drawn the demo's
   reminders (it answers clicks from then on), and until its live feed is open, in Debian's
   Chromium (headless, through Playwright), with the demo's tiles and without. Baseline: the same
   browser opening a page of Leaflet alone with five circles, served by Python's http.server
   from the same machine. Goal: drawn in under 1 s.
2. A map view over a million collection places: the round trip of /api/places (the grid index
   asked for the view, up to 500 places as JSON) for views from a street to a region. Baseline:
   the round trip of a 1 KB static file from the same server. Goal: under 50 ms.

Figures are medians of several rounds after one warm-up.
"""
import http.client
import http.server
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ROUNDS = 7


def start_map(geoalarm, config, state):
    """`geoalarm map` on `config`; its address once it says it."""
    process = subprocess.Popen(
        [geoalarm, "map", "--config", config, "--state", state], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in process.stdout:
        if line.startswith("geoalarm map: open "):
            return process, line[len("geoalarm map: open "):].strip()
    sys.exit(f"geoalarm map printed no address (status {process.wait()})")


def page_ready_ms(browser, url, *selectors):
    """Milliseconds from navigation start until each selector is on the page, in turn."""
    page = browser.new_page()
    page.goto(url)
    times = []
    for selector in selectors:
        page.wait_for_selector(selector, state="attached")
        times.append(page.evaluate("performance.now()"))
    page.close()
    return times


def baseline_page(folder):
    """A page of Leaflet alone with five circles, and a server for it."""
    with open(os.path.join(folder, "index.html"), "w") as page:
        page.write("""<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="leaflet/leaflet.css"><style>#map { height: 600px }</style></head>
<body><div id="map"></div><script src="leaflet/leaflet.js"></script><script>
const map = L.map("map").setView([38.7105, -9.1366], 16);
for (let i = 0; i < 5; i++) L.circle([38.7105 + i * 0.001, -9.1366], { radius: 50 }).addTo(map);
const done = document.createElement("p"); done.id = "ready"; document.body.append(done);
</script></body></html>""")
    os.symlink("/usr/share/javascript/leaflet", os.path.join(folder, "leaflet"))
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=folder)
    http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/index.html"


def places_config(folder, count):
    """A config with one collection of `count` places spread over Portugal."""
    rows = random.Random(7)
    with open(os.path.join(folder, "places.csv"), "w") as csv:
        csv.write("name,lat,lon\n")
        for number in range(count):
            csv.write(f"p{number},{rows.uniform(37.0, 42.0):.6f},{rows.uniform(-9.5, -6.2):.6f}\n")
    config = os.path.join(folder, "config.toml")
    with open(config, "w") as file:
        file.write('[[collection]]\nid = "many"\nfile = "places.csv"\ntitle = "Place {name}"\nradius = "30m"\n')
    return config


def round_trip_ms(address, path, token):
    parts = urllib.parse.urlsplit(address)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    start = time.perf_counter()
    connection.request("GET", path, headers={"Host": parts.netloc, "X-GeoAlarm-Token": token})
    response = connection.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - start) * 1000
    connection.close()
    assert response.status == 200, (path, response.status, body[:200])
    return elapsed, body


def main():
    geoalarm, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    results = {}
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        server, baseline = baseline_page(folder)
        page_ready_ms(browser, baseline, "#ready")
        theirs = statistics.median(page_ready_ms(browser, baseline, "#ready")[0] for _ in range(ROUNDS))
        # The demo as it is (OpenStreetMap's tiles), and without tiles: on a machine without a
        # network, the tiles' failing lookups hold back the live feed's connection.
        without_tiles = os.path.join(folder, "demo-without-tiles.toml")
        with open("config/demo.toml") as demo, open(without_tiles, "w") as copy:
            copy.write(demo.read() + '\n[map]\ntiles = ""\n')
        for name, config in [("demo", "config/demo.toml"), ("demo without tiles", without_tiles)]:
            process, address = start_map(geoalarm, config, os.path.join(folder, "state.sqlite"))
            try:
                # Drawn: the reminders are on the map and in the list, the page answers clicks;
                # live: its feed from the server is open.
                page_ready_ms(browser, address, "#reminders li", '#status[data-live="true"]')
                rounds = [page_ready_ms(browser, address, "#reminders li", '#status[data-live="true"]') for _ in range(ROUNDS)]
            finally:
                process.terminate()
                process.wait()
            results[name] = (statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds))
        server.shutdown()
        results["leaflet"] = theirs
        browser.close()

        config = places_config(work, 1_000_000)
        process, address = start_map(geoalarm, config, os.path.join(folder, "state-many.sqlite"))
        try:
            token = urllib.parse.parse_qs(urllib.parse.urlsplit(address).fragment)["token"][0]
            static, _ = round_trip_ms(address, "/map.css", token)
            views = {"a street (0.01°)": 0.005, "a town (0.05°)": 0.025, "a region (1°)": 0.5}
            for name, half in views.items():
                times, counts = [], []
                for number in range(ROUNDS + 1):
                    middle = (39.5 + number * 0.01, -7.8 + number * 0.01)
                    query = urllib.parse.urlencode({
                        "south": middle[0] - half, "north": middle[0] + half, "west": middle[1] - half, "east": middle[1] + half,
                        "limit": 500,
                    })
                    elapsed, body = round_trip_ms(address, f"/api/places?{query}", token)
                    answer = json.loads(body)
                    if number > 0:
                        times.append(elapsed)
                        counts.append((len(answer["places"]), answer["complete"]))
                results[name] = (statistics.median(times), counts[0])
            statics = [round_trip_ms(address, "/map.css", token)[0] for _ in range(ROUNDS)]
            results["static"] = statistics.median(statics)
        finally:
            process.terminate()
            process.wait()

    theirs = results["leaflet"]
    for name in ["demo", "demo without tiles"]:
        drawn, live = results[name]
        print(f"map page, {name}: drawn and answering in {drawn:.0f} ms (goal < 1000 ms), live in {live:.0f} ms; "
              f"a page of Leaflet alone: {theirs:.0f} ms; ratio {drawn / theirs:.2f}")
    static = results["static"]
    for name in ["a street (0.01°)", "a town (0.05°)", "a region (1°)"]:
        elapsed, (count, complete) = results[name]
        print(f"/api/places over 1,000,000 places, {name}: {elapsed:.1f} ms for {count} places"
              f"{'' if complete else ' (capped)'} (goal < 50 ms); a static file: {static:.1f} ms; ratio {elapsed / static:.1f}")


if __name__ == "__main__":
    main()
