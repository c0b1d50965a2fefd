# geoalarm: location reminders for Linux.
#   make demo   build, then replay the bundled demo walk against config/demo.toml
#   make test   install what is missing, build, run every test

SWIFT_BIN_DIR ?= $(firstword $(wildcard /opt/swift/usr/bin) $(dir $(shell command -v swift 2>/dev/null)))
export PATH := $(SWIFT_BIN_DIR):$(PATH)
SWIFT ?= swift
CONFIGURATION ?= debug
BIN = .build/$(CONFIGURATION)/geoalarm

# Debian packages the build and the tests use.
APT_PACKAGES =

.PHONY: all deps build test demo clean

all: build

deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing missing packages:" $$missing; \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "swift not found: install Swift 6.1 or later (looked in /opt/swift/usr/bin and PATH)"; exit 1; }

build:
	$(SWIFT) build -c $(CONFIGURATION)

test: deps build
	$(SWIFT) test

demo: build
	$(BIN) replay --config config/demo.toml config/demo/walk.nmea

clean:
	rm -rf .build
