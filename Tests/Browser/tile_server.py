#!/usr/bin/env python3
"""A map tile server on 127.0.0.1, as people run one beside geoalarm map (a local tile server):
answers every GET with a small PNG, and prints one JSON line per request with what the browser
sent it (path, Cookie, Referer and every header), so that a test can check that nothing of the
map's credential ever reaches another server on the host.

    tile_server.py        prints "listening PORT", then a line per request
"""
import http.server
import json
import struct
import sys
import zlib


def png(width, height, grey):
    """A grey PNG of one colour."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes([grey]) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


TILE = png(256, 256, 200)


class Tiles(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print(json.dumps({"path": self.path, "headers": dict(self.headers.items())}), flush=True)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(TILE)))
        self.end_headers()
        self.wfile.write(TILE)

    def log_message(self, *arguments):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Tiles)
print(f"listening {server.server_address[1]}", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
