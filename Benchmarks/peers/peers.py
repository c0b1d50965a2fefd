"""Python peers of geoalarm, run by `make bench` on the same files as the Swift benchmarks.

Each peer does what a user scripting the job would: parse the track (pynmea2 for NMEA, the json
module for gpsd JSON), find the fences near each fix (shapely's STRtree over their bounding
boxes, or a brute-force NumPy haversine over all of them), and apply geoalarm's rules (max_error,
time order, confirmations, hysteresis band), so that the events must come out the same. They
are timed in-process (parse + fences, without the interpreter's start). `geoalarm replay` is
timed as a whole command, start-up included, and also per fix without its start-up: the
difference between replaying a longer track of the same walk (LONG) and the track (SHORT),
divided by the difference in fixes.

Usage: peers.py GEOALARM CONFIG SHORT:LONG...
"""
import datetime
import json
import math
import statistics
import subprocess
import sys
import time
import tomllib

import numpy
import pynmea2
import shapely

EARTH_RADIUS = 6371008.8  # metres, as geoalarm's Haversine


def load_fences(path):
    with open(path, "rb") as handle:
        config = tomllib.load(handle)
    defaults = config.get("defaults", {})
    max_error = float(str(defaults.get("max_error", "100")).rstrip("m"))
    fences = [
        dict(id=r["id"], lat=r["lat"], lon=r["lon"], radius=r["radius"], reach=r["radius"] + r.get("hysteresis", 25))
        for r in config["reminder"]
    ]
    return fences, max_error, defaults.get("confirmations", 2)


def nmea_fixes(path):
    """(time, lat, lon, error) per RMC, the error from the epoch's GGA HDOP (x 19 m, as gpsd 3.22)."""
    hdop = None
    with open(path, encoding="ascii", errors="replace") as handle:
        for line in handle:
            try:
                sentence = pynmea2.parse(line.strip())
            except pynmea2.ParseError:
                continue
            if isinstance(sentence, pynmea2.GGA):
                hdop = float(sentence.horizontal_dil) if sentence.horizontal_dil else None
            elif isinstance(sentence, pynmea2.RMC) and sentence.status == "A":
                stamp = datetime.datetime.combine(sentence.datestamp, sentence.timestamp).replace(tzinfo=datetime.timezone.utc)
                yield stamp.timestamp(), sentence.latitude, sentence.longitude, hdop * 19 if hdop else None


def json_fixes(path):
    with open(path) as handle:
        for line in handle:
            report = json.loads(line)
            if report.get("class") == "TPV" and report.get("mode", 0) >= 2:
                stamp = datetime.datetime.fromisoformat(report["time"].replace("Z", "+00:00")).timestamp()
                yield stamp, report["lat"], report["lon"], report.get("eph")


class Trackers:
    """geoalarm's inside/outside rules, per fence: evidence, streaks of confirmations, the band."""

    def __init__(self, fences, confirmations):
        self.fences = fences
        self.confirmations = confirmations
        self.presence = ["unknown"] * len(fences)
        self.streak = [None] * len(fences)  # (side, count)

    def settled_outside(self, index):
        """Nothing but a fix within reach can change this fence."""
        return self.presence[index] == "outside" and self.streak[index] is None

    def observe(self, index, distance):
        fence = self.fences[index]
        if distance <= fence["radius"]:
            evidence = "inside"
        elif distance > fence["reach"]:
            evidence = "outside"
        else:
            evidence = "inside" if self.presence[index] == "inside" else "outside"
        if evidence == self.presence[index]:
            self.streak[index] = None
            return None
        side, count = self.streak[index] or (evidence, 0)
        count = count + 1 if side == evidence else 1
        self.streak[index] = (evidence, count)
        if count < self.confirmations:
            return None
        before = self.presence[index]
        self.presence[index] = evidence
        self.streak[index] = None
        return None if before == "unknown" else ("arrive" if evidence == "inside" else "leave")


def haversine(lat1, lon1, lat2, lon2):
    p1, p2 = numpy.radians(lat1), numpy.radians(lat2)
    dlat, dlon = p2 - p1, numpy.radians(lon2) - numpy.radians(lon1)
    a = numpy.sin(dlat / 2) ** 2 + numpy.cos(p1) * numpy.cos(p2) * numpy.sin(dlon / 2) ** 2
    return 2 * EARTH_RADIUS * numpy.arcsin(numpy.sqrt(numpy.minimum(1.0, a)))


def run_strtree(fixes, fences, max_error, confirmations):
    trackers = Trackers(fences, confirmations)
    boxes = []
    for f in fences:
        dlat = math.degrees(f["reach"] / EARTH_RADIUS) * 1.001
        dlon = dlat / math.cos(math.radians(abs(f["lat"]) + dlat))
        boxes.append(shapely.box(f["lon"] - dlon, f["lat"] - dlat, f["lon"] + dlon, f["lat"] + dlat))
    tree = shapely.STRtree(boxes)
    unsettled = set(range(len(fences)))
    events, last = [], None
    for stamp, lat, lon, error in fixes:
        if (error is not None and error > max_error) or (last is not None and stamp <= last):
            continue
        last = stamp
        for index in sorted(set(tree.query(shapely.Point(lon, lat)).tolist()) | unsettled):
            f = fences[index]
            kind = trackers.observe(index, float(haversine(lat, lon, f["lat"], f["lon"])))
            if trackers.settled_outside(index):
                unsettled.discard(index)
            else:
                unsettled.add(index)
            if kind:
                events.append((round(stamp), kind, f["id"]))
    return events


def run_numpy(fixes, fences, max_error, confirmations):
    trackers = Trackers(fences, confirmations)
    lats = numpy.array([f["lat"] for f in fences])
    lons = numpy.array([f["lon"] for f in fences])
    reaches = numpy.array([f["reach"] for f in fences])
    quiet = numpy.zeros(len(fences), dtype=bool)  # settled outside
    events, last = [], None
    for stamp, lat, lon, error in fixes:
        if (error is not None and error > max_error) or (last is not None and stamp <= last):
            continue
        last = stamp
        distances = haversine(lat, lon, lats, lons)
        # Only fences that can change need the per-fence rules: not settled outside, or within reach.
        for index in numpy.nonzero(~quiet | (distances <= reaches))[0]:
            kind = trackers.observe(index, float(distances[index]))
            quiet[index] = trackers.settled_outside(index)
            if kind:
                events.append((round(stamp), kind, fences[index]["id"]))
    return events


def geoalarm_events(binary, config, track):
    started = time.perf_counter()
    output = subprocess.run([binary, "replay", "--json", "-c", config, track], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    events = []
    for line in output.stdout.splitlines():
        record = json.loads(line)
        stamp = datetime.datetime.fromisoformat(record["time"].replace("Z", "+00:00")).timestamp()
        events.append((round(stamp), record["event"], record["reminder"]))
    return events, seconds


def main():
    binary, config, pairs = sys.argv[1], sys.argv[2], [pair.split(":") for pair in sys.argv[3:]]
    fences, max_error, confirmations = load_fences(config)
    print(f"Python peers against geoalarm replay, {len(fences)} reminders; fixes per second, median of 3 runs (low-high)")
    print("| track | fixes | geoalarm replay, whole command | geoalarm, per fix without start-up | pynmea2/json + STRtree "
          "| pynmea2/json + NumPy brute force | pynmea2/json parsing alone | geoalarm per fix / best peer "
          "| whole command / best peer | events (all agree) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    failed = False
    ratios = []  # (track, geoalarm per fix / best peer)
    floors = []  # (track, ns a fix at 100x the best peer, ns a fix of the peers' parsing alone)
    for track, long_track in pairs:
        reader = nmea_fixes if track.endswith(".nmea") else json_fixes
        # The peers' floor, which also counts the fixes: their parsing of the track with no fences.
        rates, results = {"parsing": []}, {}
        for _ in range(3):
            started = time.perf_counter()
            count = sum(1 for _ in reader(track))
            rates["parsing"].append(count / (time.perf_counter() - started))
        for name, peer in [("strtree", run_strtree), ("numpy", run_numpy)]:
            samples = []
            for _ in range(3):
                started = time.perf_counter()
                results[name] = peer(reader(track), fences, max_error, confirmations)
                samples.append(count / (time.perf_counter() - started))
            rates[name] = samples
        samples, marginal = [], []
        long_count = sum(1 for _ in reader(long_track))
        for _ in range(3):
            ours, seconds = geoalarm_events(binary, config, track)
            _, long_seconds = geoalarm_events(binary, config, long_track)
            samples.append(count / seconds)
            marginal.append((long_count - count) / (long_seconds - seconds))
        rates["geoalarm"], rates["marginal"] = samples, marginal
        agree = ours == results["strtree"] == results["numpy"]
        failed |= not agree

        def cell(name):
            values = sorted(rates[name])
            return f"{values[1]:,.0f} ({values[0]:,.0f}-{values[2]:,.0f})"

        best = max(statistics.median(rates["strtree"]), statistics.median(rates["numpy"]))
        ratios.append((track, statistics.median(rates["marginal"]) / best))
        print(f"| {track.split('/')[-1]} | {count:,} | {cell('geoalarm')} | {cell('marginal')} | {cell('strtree')} "
              f"| {cell('numpy')} | {cell('parsing')} | {ratios[-1][1]:.0f}x "
              f"| {statistics.median(rates['geoalarm']) / best:.0f}x | {len(ours)} ({'yes' if agree else 'NO'}) |")
        floors.append((track, 1e9 / (100 * best), 1e9 / statistics.median(rates["parsing"])))
        if not agree:
            print(f"events differ: geoalarm {len(ours)}, STRtree {len(results['strtree'])}, NumPy {len(results['numpy'])}",
                  file=sys.stderr)
    # Issue 42's goal of 100x, withdrawn by issue 79 (no user waits on a replay): the ratio is
    # reported, not judged.
    print("geoalarm per fix against the strongest Python peer: "
          + ", ".join(f"{track.split('/')[-1]} {ratio:.0f}x" for track, ratio in ratios))
    for track, goal, parsing in floors:
        print(f"{track.split('/')[-1]}: 100x the best peer is {goal:,.0f} ns a fix, parse and fences; "
              f"the peers' parsing alone takes {parsing:,.0f} ns a fix ({parsing / goal:.0f} times that)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
