#!/usr/bin/env python3
"""The other side of geoalarm's task lists in the tests: a CalDAV client (the `caldav` library,
from PyPI) that makes a task collection and writes and reads tasks the way iOS and RFC 9074
clients do, on a CalDAV server (Radicale, on loopback).

    caldav_peer.py URL USER COMMAND [ARGUMENTS]

    make-list              makes the task collection "tasks" (VTODO only); prints its address
    put FILE               stores the object in FILE (raw bytes, as a phone sends them); prints its address
    get UID                prints the object of the task UID, as the server has it
    complete UID           marks the task completed on the server, as another device would
    describe UID TEXT      sets the task's DESCRIPTION on the server, as another device's edit
    add-rfc UID TITLE LAT LON METRES   stores a task with an RFC 9074 arrive alarm (PROXIMITY, VLOCATION)

CALDAV_PASSWORD (default "x") is the user's password, CALDAV_CAFILE the authority of a TLS server.
Each command exits 0 when done; any failure exits 1 saying why.
"""
import os
import sys

import caldav


def collection(client, user):
    return client.calendar(url=f"{client.url}{user}/tasks/")


def task(calendar, uid):
    return calendar.todo_by_uid(uid)


def replaced(data, name, line):
    """`data` with the first property `name` replaced by `line` (or added before END:VTODO)."""
    lines = data.replace("\r\n", "\n").split("\n")
    # Unfold: a property and its continuations are one.
    unfolded = []
    for text in lines:
        if text.startswith((" ", "\t")) and unfolded:
            unfolded[-1] += text[1:]
        else:
            unfolded.append(text)
    # Only the VTODO's own properties: not those of its alarms or places.
    depth = 0
    for index, text in enumerate(unfolded):
        if text.startswith("BEGIN:"):
            depth += 1
        elif text.startswith("END:"):
            depth -= 1
        elif depth == 2 and text.split(":", 1)[0].split(";", 1)[0].upper() == name:
            unfolded[index] = line
            break
    else:
        unfolded.insert(unfolded.index("END:VTODO"), line)
    return "\r\n".join(unfolded)


def main():
    url, user, command, arguments = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    # A server that checks passwords, or speaks TLS with a private authority, gets them from the environment.
    password = os.environ.get("CALDAV_PASSWORD", "x")
    verify = os.environ.get("CALDAV_CAFILE", True)
    with caldav.DAVClient(url=url, username=user, password=password, ssl_verify_cert=verify) as client:
        if command == "make-list":
            made = client.principal().make_calendar(name="tasks", cal_id="tasks", supported_calendar_component_set=["VTODO"])
            print(made.url)
        elif command == "put":
            with open(arguments[0], encoding="utf-8", newline="") as file:
                print(collection(client, user).save_todo(ical=file.read()).url)
        elif command == "get":
            print(task(collection(client, user), arguments[0]).data)
        elif command == "complete":
            todo = task(collection(client, user), arguments[0])
            data = replaced(todo.data, "STATUS", "STATUS:COMPLETED")
            data = replaced(data, "COMPLETED", "COMPLETED:20270101T000000Z")
            todo.data = data
            todo.save()
        elif command == "describe":
            todo = task(collection(client, user), arguments[0])
            todo.data = replaced(todo.data, "DESCRIPTION", "DESCRIPTION:" + arguments[1])
            todo.save()
        elif command == "add-rfc":
            uid, title, lat, lon, metres = arguments
            lines = [
                "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//geoalarm tests//RFC 9074 client//EN", "BEGIN:VTODO",
                f"UID:{uid}", "DTSTAMP:20261101T080000Z", f"SUMMARY:{title}", "BEGIN:VALARM", "ACTION:DISPLAY",
                "DESCRIPTION:Reminder", "TRIGGER:PT0S", "PROXIMITY:ARRIVE", "BEGIN:VLOCATION", f"UID:{uid}-place",
                f"NAME:{title}", f"URL:geo:{lat},{lon};u={metres}", "END:VLOCATION", "END:VALARM", "END:VTODO", "END:VCALENDAR",
            ]
            print(collection(client, user).save_todo(ical="\r\n".join(lines) + "\r\n").url)
        else:
            print(f"caldav_peer: no command {command}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
