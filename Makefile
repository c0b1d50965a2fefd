# geoalarm: location reminders for Linux.
#   make demo      build, then play the demo walk through a private gpsd (gpsfake) into `geoalarm run`
#   make test      install what is missing, build, run every test and a short pass of every fuzz target
#   make check     the pure modules' tests only (core, config, pipeline, store, scanners, ...): the loop while working
#   make fuzz      fuzz every parser for FUZZ_SECONDS each (libFuzzer; crashes land in .build-fuzz/crashes)
#   make install   build for release and install (PREFIX=/usr/local, DESTDIR for staging)
#   make deb       build geoalarm_VERSION_ARCH.deb (the Swift runtime linked in) and check it with lintian

SHELL := /bin/bash
SWIFT_BIN_DIR ?= $(firstword $(wildcard /opt/swift/usr/bin) $(dir $(shell command -v swift 2>/dev/null)))
export PATH := $(SWIFT_BIN_DIR):$(PATH)
SWIFT ?= swift
CONFIGURATION ?= debug
BIN = .build/$(CONFIGURATION)/geoalarm

PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_CONFIGURATION ?= release
# The binary `make install` copies (`make deb` passes its statically linked one).
BINARY ?= .build/$(INSTALL_CONFIGURATION)/geoalarm

# Debian packages the build and the tests use: libgps for the gpsd adapter, gpsd and gpsfake
# (gpsd-clients) for the live tests and the demo, systemd and man-db for checking the units,
# libnotify for pop-ups, and dunst, Xvfb and D-Bus for the tests on a real notification server
# (dbus-monitor sees what it signals, gdbus waits for its name on the bus),
# SQLite for the state store (and its command-line shell for the tests), libmosquitto for the
# MQTT adapter and mosquitto with its clients for the tests against a real broker, libsodium for
# OwnTracks' encrypted payloads.
# dpkg-dev, binutils, lintian and debootstrap build the Debian package and test installing it;
# systemd-container boots that root to run the units under a real systemd.
# Leaflet draws `geoalarm map`'s page; Chromium and a Python venv (Playwright) test it.
# Radicale (a CalDAV server), vdirsyncer and todoman are the other side of the task-list tests;
# util-linux's unshare gives the state-file tests a disk of their own to fill.
# GeoClue (its daemon and client library) is the fix source of machines without a receiver
# (python3-gi runs its tests' private bus, agent and NMEA feed);
# desktop-file-utils and AppStream validate the desktop entry and metainfo.
APT_PACKAGES = libgps-dev gpsd gpsd-clients python3 systemd man-db \
	libnotify-dev libnotify-bin dunst xvfb dbus-daemon dbus-bin libglib2.0-bin libsqlite3-dev sqlite3 \
	libmosquitto-dev mosquitto mosquitto-clients openssl libsodium-dev libcurl4-openssl-dev \
	dpkg-dev binutils lintian debootstrap systemd-container \
	libjs-leaflet chromium python3-venv \
	radicale vdirsyncer todoman util-linux tzdata \
	geoclue-2.0 libgeoclue-2-dev python3-gi desktop-file-utils appstream

.PHONY: all deps build test check demo replay-demo install clean fuzz fuzz-build deb test-package

all: build

deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing missing packages:" $$missing; \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "swift not found: install Swift 6.1 or later (looked in /opt/swift/usr/bin and PATH)"; exit 1; }

build:
	$(SWIFT) build -c $(CONFIGURATION)

# Each step of `make test` says how long it took, so that a slow run shows where its time went.
TIMED = @bash -c 'start=$$(date +%s); "$$@"; status=$$?; echo "make test: $$* took $$(( $$(date +%s) - start )) s"; exit $$status' timed

test: deps
	$(TIMED) docs/module-graph --check
	$(TIMED) docs/module-graph --self-test
	$(TIMED) $(SWIFT) build -c $(CONFIGURATION)
	$(TIMED) $(MAKE) --no-print-directory browser-deps tasks-deps
	$(TIMED) $(MAKE) --no-print-directory swift-test
	$(TIMED) $(MAKE) test-package
	$(TIMED) $(MAKE) fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

# The tests of the modules that start no other program (no gpsd, broker, browser or Debian
# root): a few minutes, for the loop while working. `make test` runs them too, with the rest.
CHECK_TARGETS = GeoAlarmCoreTests GeoAlarmConfigTests GeoAlarmPipelineTests GeoAlarmStoreTests GeoAlarmScannersTests \
	GeoAlarmEncodingTests GeoAlarmOwnTracksTests GeoAlarmSecretBoxTests GeoAlarmAgentTests GeoAlarmOutputTests GeoAlarmTasksTests \
	GeoAlarmGeoClueTests
CHECK_FILTER = ^($(shell echo $(CHECK_TARGETS) | tr ' ' '|'))\.
check: deps
	$(TIMED) $(SWIFT) build --build-tests
	$(TIMED) $(SWIFT) test --skip-build --filter '$(CHECK_FILTER)'

# The tests run in several processes at once (see Tests/run: they mostly wait for other
# programs), each suite's output kept whole in $(SWIFT_TEST_LOG); the lines that say what failed
# are printed at the end (with the messages under them), so that the tail of a log names them.
SWIFT_TEST_LOG = .build/swift-test.log
TEST_PROCESSES ?= $(shell echo $$(( 2 * $$(nproc) )))
# The map's browser tests drive Debian's Chromium with Playwright, from PyPI in a venv (it
# downloads no browser: the tests name /usr/bin/chromium).
BROWSER_VENV = .build/browser-venv
PLAYWRIGHT_VERSION = 1.65.2
.PHONY: browser-deps
browser-deps: deps
	@[ -x $(BROWSER_VENV)/bin/python3 ] || python3 -m venv $(BROWSER_VENV)
	@$(BROWSER_VENV)/bin/python3 -c 'import playwright' 2>/dev/null || $(BROWSER_VENV)/bin/pip install -q playwright==$(PLAYWRIGHT_VERSION)

# The task-list tests write tasks as phones do with the `caldav` library, from PyPI in a venv.
TASKS_VENV = .build/tasks-venv
CALDAV_VERSION = 3.6.0
.PHONY: tasks-deps
tasks-deps: deps
	@[ -x $(TASKS_VENV)/bin/python3 ] || python3 -m venv $(TASKS_VENV)
	@$(TASKS_VENV)/bin/python3 -c 'import caldav' 2>/dev/null || $(TASKS_VENV)/bin/pip install -q caldav==$(CALDAV_VERSION)

.PHONY: swift-test
swift-test: browser-deps tasks-deps
	$(SWIFT) build --build-tests
	@SWIFT=$(SWIFT) Tests/run $(SWIFT_TEST_LOG) $(TEST_PROCESSES) '$(CHECK_FILTER)'; status=$$?; \
	[ $$status -eq 0 ] || { \
		echo "make test: what failed (all of it in $(SWIFT_TEST_LOG)):"; \
		awk '/✘|error:|[Ff]atal|EventWait:/ && !/^✘ Test run with/ { print; said = 1; next } \
			said && /^↳/ { print; next } { said = 0 }' $(SWIFT_TEST_LOG) | cut -c1-600 | tail -60; exit 1; }

# The Debian package: a release build with the Swift runtime linked statically, laid out by
# `make install PREFIX=/usr`, Depends from dpkg-shlibdeps, then lintian (no error or warning
# allowed: a man page that groff warns of renders wrong).
DEB_VERSION = $(shell dpkg-parsechangelog -l packaging/debian/changelog -S Version)
DEB_ARCH = $(shell dpkg --print-architecture)
DEB = geoalarm_$(DEB_VERSION)_$(DEB_ARCH).deb
# No $$ORIGIN rpath: nothing is loaded from beside the binary.
STATIC_BUILD = $(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath --scratch-path .build-static
deb: deps
	$(STATIC_BUILD)
	packaging/debian/build-deb .build-static/release/geoalarm .
	lintian --fail-on error,warning --tag-display-limit 0 $(DEB)

# The package's contents, then installing it into a fresh minimal Debian root (debootstrap,
# cached in $$GEOALARM_ROOT_CACHE) that has no Swift, and using it there.
test-package: deb
	packaging/debian/test-package $(DEB) $(BIN)

# Coverage-guided fuzzing (Fuzz/ is its own package, built with -sanitize=fuzzer,address).
FUZZ_SECONDS ?= 60
TEST_FUZZ_SECONDS ?= 10
FUZZ_TARGETS = nmea gpsd-json gpx toml config csv geojson gpx-waypoints editor owntracks http map ical webdav
fuzz-build:
	cd Fuzz && $(SWIFT) build -c release -Xswiftc -sanitize=fuzzer,address

fuzz: fuzz-build
	Fuzz/run Fuzz/.build/release/geoalarm-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The real path: gpsfake starts a private gpsd on a free port and plays the walk into it;
# geoalarm connects, prints events as they happen, and is stopped with SIGTERM at the end.
# gpsfake gets a TMPDIR of its own: it takes gpsd as ready once $TMPDIR/gpsfake-PID.sock exists,
# which a file left by an earlier gpsd of the same PID would fake.
demo: deps build
	@port=$$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	TMPDIR=$$(mktemp -d) gpsfake -n -q -1 -c 0.005 -W 1 -P $$port config/demo/walk.nmea >/dev/null 2>&1 & fake=$$!; \
	for i in $$(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$$port) 2>/dev/null && break; sleep 0.05; done; \
	state=$$(mktemp -d)/state.sqlite; \
	$(BIN) run --config config/demo.toml --gpsd localhost:$$port --state $$state & agent=$$!; \
	wait $$fake; kill -TERM $$agent; wait $$agent

# The same walk without gpsd, as fast as it can go.
replay-demo: build
	$(BIN) replay --config config/demo.toml config/demo/walk.nmea

# The desktop entry, its icon and AppStream metainfo share the id GeoClue and the notification
# server know geoalarm by (DesktopEntry.id).
DESKTOP_ID = io.github.geoalarm.GeoAlarm

# Completions come from the argument parser of the binary being installed.
install: $(if $(NO_BUILD),,install-build)
	install -D -m 0755 $(BINARY) $(DESTDIR)$(PREFIX)/bin/geoalarm
	sed 's|@BINDIR@|$(PREFIX)/bin|' packaging/systemd/geoalarm.service | install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/lib/systemd/user/geoalarm.service
	sed 's|@BINDIR@|$(PREFIX)/bin|' packaging/systemd/geoalarm-headless.service | install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/lib/systemd/system/geoalarm-headless.service
	install -D -m 0644 packaging/man/geoalarm.1 $(DESTDIR)$(PREFIX)/share/man/man1/geoalarm.1
	install -D -m 0644 packaging/man/geoalarm.toml.5 $(DESTDIR)$(PREFIX)/share/man/man5/geoalarm.toml.5
	$(BINARY) --generate-completion-script bash | sed '1{/^#!/d}' | install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/share/bash-completion/completions/geoalarm
	$(BINARY) --generate-completion-script zsh | install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_geoalarm
	$(BINARY) --generate-completion-script fish | install -D -m 0644 /dev/stdin $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/geoalarm.fish
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/geoalarm config/example.toml config/demo.toml README.md
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/geoalarm/demo config/demo/walk.nmea
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/applications packaging/desktop/$(DESKTOP_ID).desktop
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/metainfo packaging/desktop/$(DESKTOP_ID).metainfo.xml
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/icons/hicolor/scalable/apps packaging/desktop/$(DESKTOP_ID).svg

.PHONY: install-build
install-build:
	$(SWIFT) build -c $(INSTALL_CONFIGURATION)

clean:
	rm -rf .build

# Benchmarks (their own package in Benchmarks/): figures are reported against a baseline of the same run.
# valgrind counts instructions; the Python peers get pynmea2, shapely and NumPy from PyPI in a venv.
BENCH_PACKAGES = valgrind binutils python3-venv linux-perf
BENCH_VENV = Benchmarks/.work/venv
# The OwnTracks Recorder's binary (built from github.com/owntracks/recorder; in no Debian package),
# the peer of MQTTIngest: RECORDER=/path/to/ot-recorder make bench. Without it, geoalarm alone.
RECORDER ?=
.PHONY: bench bench-deps
bench-deps: deps
	@missing=$$(for p in $(BENCH_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@[ -x $(BENCH_VENV)/bin/python ] || python3 -m venv $(BENCH_VENV)
	@$(BENCH_VENV)/bin/python -c 'import pynmea2, shapely, numpy' 2>/dev/null || $(BENCH_VENV)/bin/pip install -q pynmea2 shapely numpy

bench: bench-deps browser-deps
	$(SWIFT) build -c release
	cd Benchmarks && $(SWIFT) build -c release
	Benchmarks/.build/release/EngineCost
	Benchmarks/.build/release/ReplayThroughput
	Benchmarks/.build/release/Instructions
	Benchmarks/.build/release/StartupMemory
	Benchmarks/.build/release/TaskListLoad
	Benchmarks/.build/release/TaskListPoll
	Benchmarks/.build/release/LiveLatency
	Benchmarks/.build/release/GeoClueUpdates
	Benchmarks/.build/release/StopLatency .build/release/geoalarm
	$(STATIC_BUILD)
	strip --strip-unneeded --remove-section=.comment --remove-section=.note -o .build-static/geoalarm-packaged .build-static/release/geoalarm
	Benchmarks/.build/release/Wakeups .build/release/geoalarm .build-static/geoalarm-packaged
	taskset -c 0 Benchmarks/.build/release/MQTTScale .build/release/geoalarm
	taskset -c 0 Benchmarks/.build/release/MQTTScale .build/release/geoalarm --dwell 2
	Benchmarks/.build/release/MQTTIngest .build/release/geoalarm $(RECORDER)
	$(BENCH_VENV)/bin/python Benchmarks/peers/peers.py .build/release/geoalarm Benchmarks/.work/reminders-100.toml \
		Benchmarks/.work/walk-100k.nmea:Benchmarks/.work/walk-1m.nmea Benchmarks/.work/walk-100k.json:Benchmarks/.work/walk-1m.json
	$(BROWSER_VENV)/bin/python3 Benchmarks/peers/map_page.py .build/release/geoalarm Benchmarks/.work/map
