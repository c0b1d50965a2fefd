#!/usr/bin/env python3
"""Drives `geoalarm map`'s page in Debian's Chromium (headless, through Playwright) for the
Swift tests in Tests/GeoAlarmLiveTests/MapBrowserTests.swift, which start the map, the agent
and gpsd, and check the config file and `geoalarm list` afterwards.

    map_page.py SCENARIO URL [JSON]

Each scenario waits on what the page shows (Playwright's waits, bounded by TIMEOUT_MS only
against a failure), prints what it saw, and exits 0; a failed check exits 1 saying why.
"""
import http.client
import json
import math
import sys
import urllib.parse

from playwright.sync_api import expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
# Only bounds a failure. An add whose answer was once "not seen in 60 s", and later not in 240 s,
# had not been sent at all: the map scrolled between the press on Add and its release.
TIMEOUT_MS = 240_000
# Errors the page's script threw, checked at the end of each scenario.
SCRIPT_ERRORS = []
# The page's calls to the map's API and how each ended, for the message of a failed scenario.
API_CALLS = []


def fail(message):
    print(f"map_page: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def open_page(browser, url):
    """The page, opened by its address with the token, live (its feed connected) and drawn."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(TIMEOUT_MS)
    page.on("pageerror", lambda error: SCRIPT_ERRORS.append(error))
    page.on("request", lambda request: note_call(request, "sent"))
    page.on("requestfinished", lambda request: note_call(request, "finished"))
    page.on("requestfailed", lambda request: note_call(request, f"failed: {request.failure}"))
    page.goto(url)
    page.wait_for_selector('#status[data-live="true"]')
    return page


def note_call(request, outcome):
    path = urllib.parse.urlsplit(request.url).path
    if path.startswith("/api/"):
        API_CALLS.append(f"{request.method} {path} {outcome}")


def screen_point(page, lat, lon):
    """Where a coordinate is on the screen, as the map projects it."""
    return page.evaluate(
        """([lat, lon]) => {
            const point = geoalarm.map.latLngToContainerPoint([lat, lon]);
            const box = geoalarm.map.getContainer().getBoundingClientRect();
            return [point.x + box.left, point.y + box.top];
        }""",
        [lat, lon],
    )


def centre_of(page, selector):
    box = page.locator(selector).bounding_box()
    check(box is not None, f"{selector} is not on the page")
    return (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, box["width"])


def shows(page, reminders):
    """Each reminder is drawn where it is: its circle's centre and size on the screen match the
    map's projection of its centre and radius (within 2 pixels and 5%)."""
    for reminder in reminders:
        selector = f'path[data-id="{reminder["id"]}"]'
        page.wait_for_selector(selector)
        x, y, width = centre_of(page, selector)
        ex, ey = screen_point(page, reminder["lat"], reminder["lon"])
        check(abs(x - ex) <= 2 and abs(y - ey) <= 2, f'{reminder["id"]} is drawn at {x:.1f},{y:.1f}, not at {ex:.1f},{ey:.1f}')
        east = reminder["lon"] + math.degrees(reminder["radius"] / (6371008.8 * math.cos(math.radians(reminder["lat"]))))
        rx, _ = screen_point(page, reminder["lat"], east)
        check(abs(width / 2 - (rx - ex)) <= max(2, 0.05 * (rx - ex)), f'{reminder["id"]} is {width / 2:.1f} px wide, not {rx - ex:.1f}')
        entry = page.locator(f'#reminders li[data-id="{reminder["id"]}"] button.title')
        check(entry.inner_text() == reminder["title"], f'the list names {reminder["id"]} "{entry.inner_text()}"')
        print(f'shown {reminder["id"]} at {x:.0f},{y:.0f}')


def add(page, title, radius):
    """A click on an empty spot, a title and a radius: the new circle is drawn there."""
    # Near the bottom left corner: the page fits the reminders and the position with a margin of
    # a tenth around them, and puts no control there.
    box = page.locator("#map").bounding_box()
    x, y = round(box["x"] + box["width"] * 0.04), round(box["y"] + box["height"] * 0.94)
    lat, lon = page.evaluate(
        """([x, y]) => {
            const box = geoalarm.map.getContainer().getBoundingClientRect();
            const point = geoalarm.map.containerPointToLatLng([x - box.left, y - box.top]);
            return [point.lat, point.lng];
        }""",
        [x, y],
    )
    page.mouse.click(x, y)
    page.fill('form.add input[name="title"]', title)
    page.fill('form.add input[name="radius"]', radius)
    # The popup overflows the map here. Were the map a scroll container, pressing Add would
    # scroll the button away before the release (and the release would land on a field).
    scrolled = page.evaluate(
        """() => {
            const container = geoalarm.map.getContainer();
            container.scrollTop = container.scrollHeight;
            container.scrollLeft = container.scrollWidth;
            return [container.scrollLeft, container.scrollTop];
        }"""
    )
    check(scrolled == [0, 0], f"the map scrolls by {scrolled} under an open popup")
    with page.expect_response("**/api/add") as answer:
        page.click('form.add button[type="submit"]')
    check(answer.value.status == 201, f"adding answered {answer.value.status}: {answer.value.text()}")
    added = answer.value.json()["id"]
    page.wait_for_selector(f'path[data-id="{added}"]')
    message = page.locator("#message")
    said = message.text_content() if message.is_visible() else ""
    print(json.dumps({"id": added, "lat": lat, "lon": lon, "message": said}))


def drag(page, reminder, dx, dy):
    """Drags a reminder's centre handle by dx, dy pixels; prints where the page said it was
    dropped (the change it sent) and where the pointer ended. Leaflet leaves a dragged marker
    behind the pointer by the move that starts the drag: the steps are small."""
    x, y, _ = centre_of(page, f'.handle-centre[data-id="{reminder}"]')
    page.mouse.move(x, y)
    page.mouse.down()
    steps = 40
    for step in range(1, steps + 1):
        page.mouse.move(x + dx * step / steps, y + dy * step / steps)
    # Leaflet moves a dragged marker on the next animation frame, and a release cancels a frame
    # still pending: the release comes after that frame, as a hand's would.
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    with page.expect_response("**/api/change") as answer:
        page.mouse.up()
    check(answer.value.status == 200, f"moving answered {answer.value.status}: {answer.value.text()}")
    sent = json.loads(answer.value.request.post_data)
    lat, lon = page.evaluate(
        """([x, y]) => {
            const box = geoalarm.map.getContainer().getBoundingClientRect();
            const point = geoalarm.map.containerPointToLatLng([x - box.left, y - box.top]);
            return [point.lat, point.lng];
        }""",
        [x + dx, y + dy],
    )
    print(json.dumps({"sent": [sent["lat"], sent["lon"]], "pointer": [lat, lon]}))


def remove(page, reminder):
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_response("**/api/remove") as answer:
        page.click(f'#reminders li[data-id="{reminder}"] button:text("Remove")')
    check(answer.value.status == 200, f"removing answered {answer.value.status}: {answer.value.text()}")
    page.wait_for_selector(f'path[data-id="{reminder}"]', state="detached")
    print(f"removed {reminder}")


def snooze(page, reminder, label, other):
    """The reminder's Snooze button, which names its length, pressed: then it offers Unsnooze.
    Then, for each label read on stdin (the config changed meanwhile), waits until the other
    reminder's Snooze button says it."""
    with page.expect_response("**/api/snooze") as answer:
        page.click(f'#reminders li[data-id="{reminder}"] button:text("{label}")')
    check(answer.value.status == 200, f"snoozing answered {answer.value.status}: {answer.value.text()}")
    page.wait_for_selector(f'#reminders li[data-id="{reminder}"] button:text("Unsnooze")')
    print(f"snoozed {reminder}", flush=True)
    for line in sys.stdin:
        page.wait_for_selector(f'#reminders li[data-id="{other}"] button:text("{line.strip()}")')
        print(f"{other}: {line.strip()}", flush=True)


def refuse_radius(page, reminder, radius):
    """An invalid radius typed in a reminder's form: refused, the message shown."""
    page.click(f'#reminders li[data-id="{reminder}"] button:text("Edit")')
    page.fill(f'#reminders li[data-id="{reminder}"] form.edit input[name="radius"]', radius)
    with page.expect_response("**/api/change") as answer:
        page.click(f'#reminders li[data-id="{reminder}"] form.edit button[type="submit"]')
    check(answer.value.status == 422, f"an invalid radius answered {answer.value.status}")
    page.wait_for_selector("#message:not([hidden])")
    print(page.inner_text("#message"))


def text_only(page, reminder, title):
    """The reminder's title is on the map and in the list as text, as `title` (what the page
    shows of it): no element of its markup."""
    page.wait_for_selector(f'path[data-id="{reminder}"]')
    # Leaflet fades a redrawn map's old names out: one name is left once that is done.
    expect(page.locator(".leaflet-tooltip", has_text=title)).to_have_count(1, timeout=TIMEOUT_MS)
    entry = page.locator(f'#reminders li[data-id="{reminder}"] button.title')
    check(entry.inner_text() == title, f"the list names it {entry.inner_text()!r}")
    smuggled = page.evaluate("document.querySelectorAll('#map b, #map img:not(.leaflet-tile), #panel b, #panel img').length")
    check(smuggled == 0, f"{smuggled} elements of its markup are on the page")
    check(page.title() == "geoalarm map", f"the page's title is {page.title()!r}")
    print(f"{reminder}: shown as text")


def badge(page, reminder, text):
    """The reminder's badge in the list says `text`, and its shape on the map has the state's class."""
    selector = f'#reminders li[data-id="{reminder}"] .badge'
    page.wait_for_selector(selector)
    said = page.locator(selector).inner_text()
    check(said == text, f"{reminder}'s badge says {said!r}, not {text!r}")
    state = page.locator(selector).get_attribute("class").split("state-")[-1]
    shape = page.locator(f'path[data-id="{reminder}"]').get_attribute("class") or ""
    check(f"state-{state}" in shape.split(), f"{reminder} is drawn as {shape!r}, not state-{state}")
    print(f"{reminder}: {said}")


def live(page):
    """Says when the page watches; then, for each "LAT LON EVENTS LAST" line on stdin (a position
    the agent has saved, how many events the map lists and the newest one's kind), waits until
    the page shows you there and lists those events, the newest first."""
    print("watching", flush=True)
    for line in sys.stdin:
        lat, lon, events, last = line.split()
        page.wait_for_function(
            """([lat, lon]) => {
                const dot = document.querySelector("path.position");
                return dot !== null && Math.abs(Number(dot.dataset.lat) - lat) < 1e-9
                    && Math.abs(Number(dot.dataset.lon) - lon) < 1e-9;
            }""",
            arg=[float(lat), float(lon)],
            timeout=TIMEOUT_MS,
        )
        page.wait_for_function(
            """([count, kind]) => {
                const items = document.querySelectorAll("#history li");
                return items.length === count && items[0].className === `event-${kind}`
                    && document.querySelectorAll(`path.event.event-${kind}`).length > 0;
            }""",
            arg=[int(events), last],
            timeout=TIMEOUT_MS,
        )
        print(f"position {lat} {lon}, {events} events, the last {last}", flush=True)


def refused(url):
    """Requests without the token, with a foreign Host, with another token, a change without
    the token; the page itself is public; no answer sets a cookie."""
    parts = urllib.parse.urlsplit(url)
    token = urllib.parse.parse_qs(parts.fragment)["token"][0]
    check(token not in parts.path + parts.query, "the token is only after #, which the browser never sends")

    def ask(method, path, headers, body=None):
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT_MS / 1000)
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        text = response.read().decode()
        connection.close()
        ask.headers = {name.lower() for name, _ in response.getheaders()}
        check("set-cookie" not in ask.headers, f"{path} set a cookie")
        return response.status, text

    host = parts.netloc
    status, text = ask("GET", "/api/state", {"Host": host})
    check(status == 403, f"no token: {status}")
    print(f"no token: {status} {text.strip()}")
    status, text = ask("GET", "/", {"Host": f"evil.example:{parts.port}"})
    check(status == 421, f"a foreign Host: {status}")
    print(f"foreign Host: {status} {text.strip()}")
    status, text = ask("GET", "/api/state", {"Host": host, "X-GeoAlarm-Token": "0" * 64})
    check(status == 403, f"a wrong token: {status}")
    print(f"wrong token: {status}")
    status, text = ask("POST", "/api/remove", {"Host": host, "Content-Type": "application/json"}, '{"id":"bread"}')
    check(status == 403, f"a change without the token header: {status}")
    print(f"change without the header: {status} {text.strip()}")
    status, text = ask("GET", "/", {"Host": host})
    check(status == 200 and token not in text, f"the page: {status}")
    status, text = ask("GET", "/api/reminders", {"Host": host, "X-GeoAlarm-Token": token})
    check(status == 200 and "reminders" in text, f"with the token: {status}")
    check(not any(name.startswith("access-control-") for name in ask.headers), f"no CORS: {ask.headers}")
    check("content-security-policy" in ask.headers, "a content policy")
    print("with the token: 200")


def tiles(page):
    """The page with its tiles drawn, reloaded, and drawn again: it stays live after a reload
    (the token kept for the tab, not in the address)."""
    page.wait_for_selector("img.leaflet-tile-loaded")
    check("token" not in page.url, f"the address still holds the token: {page.url}")
    page.reload()
    page.wait_for_selector('#status[data-live="true"]')
    page.wait_for_selector("img.leaflet-tile-loaded")
    page.wait_for_selector("#reminders li")
    print(f"tiles drawn, reloaded at {page.url}")


def opened_once(browser, url):
    """A one-time link: the first page goes live; a second with the same link is refused."""
    first = open_page(browser, url)
    first.wait_for_selector("#reminders li")
    check("code" not in first.url, f"the address still holds the code: {first.url}")
    print("the link opened the map")
    second = browser.new_page()
    second.set_default_timeout(TIMEOUT_MS)
    second.goto(url)
    second.wait_for_selector("#message:not([hidden])")
    said = second.inner_text("#message")
    check("used already" in said, f"a second use said {said!r}")
    print(f"a second use: {said}")


def shows_area(page, reminder):
    """An area reminder is drawn, and the page is live."""
    page.wait_for_selector(f'path[data-id="{reminder}"]')
    print(f"{reminder} drawn, live")


def main():
    scenario, url = sys.argv[1], sys.argv[2]
    argument = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
    if scenario == "refused":
        return refused(url)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        if scenario == "opened-once":
            opened_once(browser, url)
            check(not SCRIPT_ERRORS, f"the page's script failed: {SCRIPT_ERRORS}")
            return browser.close()
        page = open_page(browser, url)
        try:
            run(page, scenario, argument)
        except Exception:
            # What the page showed when the scenario failed, for the test's message.
            print(f'map_page: the page said "{page.locator("#message").inner_text()}"; '
                  f'{page.locator("form.add").count()} add form(s), '
                  f'{page.locator(".leaflet-popup").count()} popup(s) open; '
                  f'its last calls: {API_CALLS[-5:]}', file=sys.stderr)
            raise
        check(not SCRIPT_ERRORS, f"the page's script failed: {SCRIPT_ERRORS}")
        browser.close()


def run(page, scenario, argument):
    """Plays one scenario on the open page."""
    if scenario == "shows":
        shows(page, argument)
    elif scenario == "add":
        add(page, argument["title"], argument["radius"])
    elif scenario == "drag":
        drag(page, argument["id"], argument["dx"], argument["dy"])
    elif scenario == "remove":
        remove(page, argument["id"])
    elif scenario == "snooze":
        snooze(page, argument["id"], argument["label"], argument["other"])
    elif scenario == "refuse-radius":
        refuse_radius(page, argument["id"], argument["radius"])
    elif scenario == "text-only":
        text_only(page, argument["id"], argument.get("shown", argument["title"]))
    elif scenario == "badge":
        badge(page, argument["id"], argument["text"])
    elif scenario == "live":
        live(page)
    elif scenario == "tiles":
        tiles(page)
    elif scenario == "shows-area":
        shows_area(page, argument["id"])
    elif scenario == "screenshot":
        page.screenshot(path=argument["path"])
        print(f'saved {argument["path"]}')
    else:
        fail(f"no scenario {scenario}")


if __name__ == "__main__":
    main()
