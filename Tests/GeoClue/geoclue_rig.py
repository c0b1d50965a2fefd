#!/usr/bin/python3
"""The real GeoClue daemon on a private system bus, fed NMEA, for geoalarm's tests.

    geoclue_rig.py FOLDER AGENT [DENIED]

Starts, all under FOLDER: a dbus-daemon of the system type (its address printed as
`bus ADDRESS`), a unix socket GeoClue reads NMEA from (`nmea.sock`), and Debian's
/usr/libexec/geoclue in a mount namespace of its own where /etc/geoclue is FOLDER/etc (its
config path is compiled in): every source off but network-nmea on that socket, no idle exit;
with DENIED, a desktop id that config refuses (`[DENIED]` with `allowed=false`, as a system that
allows by list writes it).
AGENT is the location agent the rig registers for this user (with AddAgent, called
asynchronously: a blocking call deadlocks, GeoClue calling back into the agent meanwhile). Its
MaxAccuracyLevel is what a desktop's location switch sets (GNOME's Location Services), and
GeoClue 2.6 asks AuthorizeApp only of sandboxed (Flatpak) applications:

    allow       MaxAccuracyLevel 8 (exact); authorizes every application as it asks
    refuse      MaxAccuracyLevel 0 (location services off); refuses every application
    cap:LEVEL   MaxAccuracyLevel LEVEL (6: street, Wi-Fi's best); authorizes at LEVEL at most
    none        registers no agent (a machine without a desktop)

It prints `ready` once GeoClue is on the bus (and the agent registered), `authorize ID LEVEL`
for each question GeoClue asks the agent, and takes commands on standard input, a line each:

    play FILE FIRST COUNT   writes epochs FIRST..FIRST+COUNT-1 of the NMEA file FILE (each the
                            sentences from a GGA or RMC of a new time to the next one; what comes
                            before the first, comments or a receiver's own, is not sent); then
                            prints `played N shifted S`. GeoClue 2.6 dates an NMEA fix with
                            today's date, or yesterday's for a time of day still to come: a file
                            whose times straddle this moment's would jump back a day. Its times of
                            day are then moved S seconds on (the same S for every play of FILE),
                            to begin ten minutes from now
                            to GeoClue, one every 20 ms, once it has connected to the socket;
                            then prints `played N`
    restart                 stops GeoClue and starts it again; prints `restarted` once it is back
    quit                    ends everything
"""
import os
import signal
import socket
import subprocess
import sys
import time

from gi.repository import Gio, GLib

AGENT_XML = """<node><interface name="org.freedesktop.GeoClue2.Agent">
<method name="AuthorizeApp"><arg name="desktop_id" type="s" direction="in"/>
<arg name="req_accuracy_level" type="u" direction="in"/><arg name="authorized" type="b" direction="out"/>
<arg name="allowed_accuracy_level" type="u" direction="out"/></method>
<property name="MaxAccuracyLevel" type="u" access="read"/></interface></node>"""

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
  </policy>
</busconfig>
"""

GEOCLUE_CONFIG = """[agent]
whitelist=geoalarm-test-agent
[network-nmea]
enable=true
nmea-socket={socket}
[3g]
enable=false
[cdma]
enable=false
[modem-gps]
enable=false
[wifi]
enable=false
[compass]
enable=false
"""


def say(*words):
    print(*words, flush=True)


class Rig:
    def __init__(self, folder, agent, denied):
        self.folder = os.path.realpath(folder)
        self.agent = agent
        self.loop = GLib.MainLoop()
        self.geoclue = None
        self.feed = None
        self.waiting_play = None
        self.restarting = False
        self.ready = False
        self.shifts = {}
        os.makedirs(f"{self.folder}/etc", exist_ok=True)
        with open(f"{self.folder}/bus.conf", "w") as config:
            config.write(BUS_CONFIG.format(socket=f"{self.folder}/bus"))
        with open(f"{self.folder}/etc/geoclue.conf", "w") as config:
            config.write(GEOCLUE_CONFIG.format(socket=f"{self.folder}/nmea.sock"))
            if denied:
                config.write(f"[{denied}]\nallowed=false\nsystem=false\nusers=\n")
        self.dbus = subprocess.Popen(
            ["dbus-daemon", "--config-file", f"{self.folder}/bus.conf", "--nofork", "--print-address"],
            stdout=subprocess.PIPE, text=True)
        address = self.dbus.stdout.readline().strip()
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
        say("bus", address)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(f"{self.folder}/nmea.sock")
        self.listener.listen(4)
        GLib.io_add_watch(self.listener.fileno(), GLib.IO_IN, self.accepted)
        self.bus = Gio.bus_get_sync(Gio.BusType.SYSTEM)
        Gio.bus_watch_name_on_connection(self.bus, "org.freedesktop.GeoClue2", Gio.BusNameWatcherFlags.NONE,
                                         self.appeared, self.vanished)
        if agent != "none":
            node = Gio.DBusNodeInfo.new_for_xml(AGENT_XML)
            level = {"allow": 8, "refuse": 0}[agent] if agent in ("allow", "refuse") else int(agent[4:])
            self.bus.register_object("/org/freedesktop/GeoClue2/Agent", node.interfaces[0], self.authorize,
                                     lambda *_: GLib.Variant("u", level), None)
        GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, self.command)
        self.start_geoclue()

    def start_geoclue(self):
        log = open(f"{self.folder}/geoclue.log", "a")
        self.geoclue = subprocess.Popen(
            ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
             'mount --bind "$0" /etc/geoclue && exec /usr/libexec/geoclue -t 0', f"{self.folder}/etc"],
            stdout=log, stderr=log)

    def appeared(self, connection, name, owner):
        if self.agent == "none":
            self.now_ready()
            return
        self.bus.call("org.freedesktop.GeoClue2", "/org/freedesktop/GeoClue2/Manager", "org.freedesktop.GeoClue2.Manager",
                      "AddAgent", GLib.Variant("(s)", ("geoalarm-test-agent",)), None, Gio.DBusCallFlags.NONE, -1, None,
                      self.agent_added)

    def agent_added(self, connection, result):
        connection.call_finish(result)
        self.now_ready()

    def now_ready(self):
        if self.restarting:
            self.restarting = False
            say("restarted")
        elif not self.ready:
            self.ready = True
            say("ready")

    def vanished(self, connection, name):
        pass

    def authorize(self, connection, sender, path, interface, method, parameters, invocation):
        desktop_id, level = parameters.unpack()
        say("authorize", desktop_id, level)
        if self.agent == "refuse":
            invocation.return_value(GLib.Variant("(bu)", (False, 0)))
        elif self.agent.startswith("cap:"):
            invocation.return_value(GLib.Variant("(bu)", (True, min(level, int(self.agent[4:])))))
        else:
            invocation.return_value(GLib.Variant("(bu)", (True, level)))

    def accepted(self, *_):
        self.feed, _ = self.listener.accept()
        if self.waiting_play:
            self.play(*self.waiting_play)
        return True

    def command(self, fd, condition):
        line = sys.stdin.readline()
        if not line or line.strip() == "quit":
            self.loop.quit()
            return False
        words = line.split()
        if words[0] == "play":
            every = self.epochs(words[1])
            shift = self.shift_for(words[1], every)
            epochs = every[int(words[2]):int(words[2]) + int(words[3])]
            if self.feed:
                self.play(epochs, shift)
            else:
                self.waiting_play = (epochs, shift)
        elif words[0] == "restart":
            self.restarting = True
            self.feed = None
            self.geoclue.send_signal(signal.SIGTERM)
            self.geoclue.wait()
            self.start_geoclue()
        return True

    @staticmethod
    def epochs(path):
        epochs = []
        time = None
        for line in open(path, "rb").read().splitlines():
            fields = line.split(b",")
            if line.startswith(b"$") and fields[0][3:] in (b"GGA", b"RMC") and len(fields) > 1 and fields[1] != time:
                time = fields[1]
                epochs.append([])
            if epochs and line.startswith(b"$"):
                epochs[-1].append(line)
        return epochs

    @staticmethod
    def seconds(sentence):
        """The time of day of a GGA or RMC sentence, in seconds; None without one."""
        fields = sentence.split(b",")
        if fields[0][3:] not in (b"GGA", b"RMC") or len(fields[1]) < 6 or not fields[1][:6].isdigit():
            return None
        return int(fields[1][:2]) * 3600 + int(fields[1][2:4]) * 60 + int(fields[1][4:6])

    def shift_for(self, path, epochs):
        """The seconds FILE's times are moved on by, chosen at its first play."""
        if path not in self.shifts:
            times = [t for epoch in epochs for t in map(self.seconds, epoch) if t is not None]
            now = int(time.time()) % 86400
            straddles = times and min(times) - 300 <= now <= max(times) + 300
            self.shifts[path] = (now + 600 - min(times)) % 86400 if straddles else 0
        return self.shifts[path]

    @staticmethod
    def shifted(sentence, shift):
        start = Rig.seconds(sentence)
        if not shift or start is None:
            return sentence
        fields = sentence[1:].split(b"*")[0].split(b",")
        moved = (start + shift) % 86400
        fields[1] = b"%02d%02d%02d" % (moved // 3600, moved // 60 % 60, moved % 60) + fields[1][6:]
        body = b",".join(fields)
        checksum = 0
        for byte in body:
            checksum ^= byte
        return b"$" + body + b"*%02X" % checksum

    def play(self, epochs, shift):
        self.waiting_play = None
        remaining = [[self.shifted(line, shift) for line in epoch] for epoch in epochs]

        def next_epoch():
            if not remaining:
                say("played", len(epochs), "shifted", shift)
                return False
            try:
                self.feed.sendall(b"\r\n".join(remaining.pop(0)) + b"\r\n")
            except (OSError, AttributeError):
                say("played", len(epochs) - len(remaining) - 1, "shifted", shift)
                return False
            return True

        GLib.timeout_add(20, next_epoch)

    def run(self):
        try:
            self.loop.run()
        finally:
            for process in (self.geoclue, self.dbus):
                process.terminate()
                process.wait()


if __name__ == "__main__":
    Rig(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None).run()
