#!/usr/bin/env python3
"""Holds every open of a file in one folder until the test lets it through (fanotify).

    open_gate.py FOLDER

Marks FOLDER for fanotify's open permission events (root only: CAP_SYS_ADMIN) and prints
`watching`. Then, for each open of a file in FOLDER by another process than its parent (the
test, whose own opens go through at once, also while others are held), it prints
`open NAME PID` and holds the opener until a line `allow` comes on standard input, one line
for each open, in order. The kernel has resolved the name when it asks: an opener held there
reads the file it found, whatever is renamed over the name meanwhile. At the end of its input, or killed, it lets every open
through (the kernel allows what a closed group still held).
"""
import ctypes
import os
import select
import struct
import sys

FAN_CLOEXEC = 0x01
FAN_CLASS_CONTENT = 0x04
FAN_MARK_ADD = 0x01
FAN_OPEN_PERM = 0x00010000
FAN_EVENT_ON_CHILD = 0x08000000
FAN_ALLOW = 0x01
AT_FDCWD = -100
# struct fanotify_event_metadata: event_len, vers, reserved, metadata_len, mask, fd, pid.
METADATA = struct.Struct("=IBBHQii")
# struct fanotify_response: fd, response.
RESPONSE = struct.Struct("=iI")


def main() -> None:
    folder = os.path.realpath(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
    group = libc.fanotify_init(FAN_CLOEXEC | FAN_CLASS_CONTENT, os.O_RDONLY | os.O_LARGEFILE)
    if group < 0:
        sys.exit(f"fanotify_init: {os.strerror(ctypes.get_errno())}")
    if libc.fanotify_mark(group, FAN_MARK_ADD, FAN_OPEN_PERM | FAN_EVENT_ON_CHILD, AT_FDCWD, folder.encode()) < 0:
        sys.exit(f"fanotify_mark {folder}: {os.strerror(ctypes.get_errno())}")
    print("watching", flush=True)
    test = os.getpid(), os.getppid()
    held = []  # the descriptors of the opens held, oldest first
    answers = b""
    while True:
        ready, _, _ = select.select([group, 0], [], [])
        if group in ready:
            events = os.read(group, 4096)
            offset = 0
            while offset < len(events):
                length, _, _, _, _, fd, pid = METADATA.unpack_from(events, offset)
                offset += length
                if pid in test:
                    allow(group, fd)
                else:
                    held.append(fd)
                    print("open", os.path.basename(os.readlink(f"/proc/self/fd/{fd}")), pid, flush=True)
        if 0 in ready:
            read = os.read(0, 4096)
            if not read:
                print("open_gate.py: end of input: letting every open through", file=sys.stderr)
                return
            answers += read
            while b"\n" in answers and held:
                line, answers = answers.split(b"\n", 1)
                if line.strip() != b"allow":
                    print(f"open_gate.py: {line!r} is not allow: letting every open through", file=sys.stderr)
                    return
                allow(group, held.pop(0))


def allow(group: int, fd: int) -> None:
    try:
        os.write(group, RESPONSE.pack(fd, FAN_ALLOW))
    except OSError as error:
        # The kernel no longer waits on it (its opener was killed): nothing is held.
        print(f"open_gate.py: answering an open: {error}", file=sys.stderr)
    os.close(fd)

if __name__ == "__main__":
    main()
