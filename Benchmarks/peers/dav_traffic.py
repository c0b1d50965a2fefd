#!/usr/bin/env python3
"""What a task list on a CalDAV server costs, for `make bench` (Benchmarks/Sources/TaskListPoll).

    dav_traffic.py fill URL COUNT     puts COUNT tasks (iOS's form, arrive alarms around Lisbon)
                                      into the collection URL (made when missing)
    dav_traffic.py touch URL N        changes task N's SUMMARY, as another device's edit would
    dav_traffic.py proxy PORT         a TCP relay to 127.0.0.1:PORT; prints `listening P`, then
                                      `bytes UP DOWN` (every byte each way so far) on each SIGUSR1

The relay counts what goes over the wire both ways, so that geoalarm and vdirsyncer are weighed
on the same scale.
"""
import base64
import http.client
import random
import signal
import socket
import sys
import threading
import urllib.parse


def task(number, summary=None):
    rng = random.Random(number)
    lat, lon = round(rng.uniform(38.6, 38.8), 6), round(rng.uniform(-9.3, -9.0), 6)
    uid = f"{number:08X}-49D1-4395-90DB-{number * 7919:012X}"
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Apple Inc.//iOS 18.1//EN", "BEGIN:VTODO",
        "CREATED:20261101T080000Z", "DTSTAMP:20261101T080000Z", "LAST-MODIFIED:20261101T080000Z",
        "STATUS:NEEDS-ACTION", f"SUMMARY:{summary or f'Errand {number}'}", f"UID:{uid}", "BEGIN:VALARM",
        "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER;VALUE=DATE-TIME:19760401T005545Z", f"UID:{uid}-A",
        "X-APPLE-PROXIMITY:ARRIVE",
        f"X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-APPLE-RADIUS={50 + number % 200};X-TITLE=Place {number}:geo:{lat},{lon}",
        "END:VALARM", "END:VTODO", "END:VCALENDAR",
    ]
    return uid, ("\r\n".join(lines) + "\r\n").encode()


def connection(url):
    """A connection to URL's server, its path, and the headers that log in as the path's owner
    (the collection is /USER/NAME/; Radicale takes any password)."""
    parts = urllib.parse.urlsplit(url)
    user = parts.path.strip("/").split("/")[0]
    login = {"Authorization": "Basic " + base64.b64encode(f"{user}:x".encode()).decode()}
    return http.client.HTTPConnection(parts.hostname, parts.port), parts.path, login


def fill(url, count):
    client, path, login = connection(url)
    body = ('<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
            '<C:supported-calendar-component-set><C:comp name="VTODO"/></C:supported-calendar-component-set>'
            '</D:prop></D:set></C:mkcalendar>')
    client.request("MKCALENDAR", path, body=body, headers={"Content-Type": "application/xml", **login})
    client.getresponse().read()
    for number in range(count):
        uid, data = task(number)
        client.request("PUT", f"{path}{uid}.ics", body=data, headers={"Content-Type": "text/calendar", **login})
        answer = client.getresponse()
        answer.read()
        if answer.status not in (201, 204):
            sys.exit(f"PUT {uid}: {answer.status}")


def touch(url, number):
    client, path, login = connection(url)
    uid, data = task(number, summary=f"Errand {number} (changed)")
    client.request("PUT", f"{path}{uid}.ics", body=data, headers={"Content-Type": "text/calendar", **login})
    answer = client.getresponse()
    answer.read()
    if answer.status not in (201, 204):
        sys.exit(f"PUT {uid}: {answer.status}")


def proxy(target):
    counts = [0, 0]
    lock = threading.Lock()

    def pump(source, sink, index):
        try:
            while data := source.recv(65536):
                with lock:
                    counts[index] += len(data)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def report(*_):
        with lock:
            print(f"bytes {counts[0]} {counts[1]}", flush=True)

    signal.signal(signal.SIGUSR1, report)
    listener = socket.create_server(("127.0.0.1", 0))
    print(f"listening {listener.getsockname()[1]}", flush=True)
    while True:
        try:
            client, _ = listener.accept()
        except InterruptedError:
            continue
        server = socket.create_connection(("127.0.0.1", target))
        threading.Thread(target=pump, args=(client, server, 0), daemon=True).start()
        threading.Thread(target=pump, args=(server, client, 1), daemon=True).start()


command = sys.argv[1]
if command == "fill":
    fill(sys.argv[2], int(sys.argv[3]))
elif command == "touch":
    touch(sys.argv[2], int(sys.argv[3]))
elif command == "proxy":
    proxy(int(sys.argv[2]))
else:
    sys.exit(__doc__)
