#!/usr/bin/env python3
"""A CalDAV server that misbehaves in one way, for geoalarm's tests of bad servers.

    hostile_dav.py MODE [CERTIFICATE KEY]

Listens on a loopback port of its own (over TLS with CERTIFICATE and its KEY, when given) and
prints `listening PORT`; answers every request as MODE says, and logs `METHOD PATH` of each
request on stderr:

    redirect-loop       302 to the same address, for ever
    status:N            status N (401, 403, 500, 503...) with a short body
    huge:BYTES          a 207 whose body is BYTES long
    endless-xml         a 207 that streams nested elements for ever
    trickle             a 207 that promises a body and sends one byte every two seconds (saying
                        `trickled N` each time, and `gone after N bytes` when the client left)
    huge-header:BYTES   a 207 with one header BYTES long
    many-headers:N      a 207 with N headers of a kilobyte each
    malformed           a 207 whose body is broken XML
    not-xml             a 207 whose body is an HTML login page
    many:N              a collection whose calendar-query lists N tasks
    etag-never-matches  a collection of one task; every PUT answers 412
    sync-parts:N        a collection of task-0 whose sync-collection from token t0 gives its
                        changes in N parts (RFC 6578's 507 on the collection, and the next
                        token): from tI, task-(I+1) added; from the last, t(N-1), task-0 removed
                        and task-1 changed again; its token is t0 at the first PROPFIND, tN after
    moved:CODE          a collection of task-1 moved: every request under /tasks/ is answered
                        CODE (301, 303...) to the same under /moved/, where a PROPFIND or REPORT
                        without a body is refused (400) and a PUT or DELETE says the size of its
                        body and is made (204)
    moved:CODE:absolute the same, the Location a whole address with its scheme in capitals
                        (HTTP://HOST/moved/...: RFC 3986 makes schemes case-insensitive)
    weak-etag           a collection of task-1 behind a proxy that makes a GET's ETag weak
                        (W/"2"); its first multiget gives ETag "1", later ones "2"; a PUT over
                        "2" is made (204, logged with its If-Match), any other is refused (412)
    web-root            a server whose root is its web pages (HTML) and whose CalDAV is under
                        /dav/, found through /.well-known/caldav (a 301): the principal ana,
                        her calendar home, and there a task list and an events calendar
    elsewhere:URL       a server whose root is its web pages and whose /.well-known/caldav
                        points (a 301) to URL, on another server
    moved-to:URL        every request answered 301 to URL, on another server
    home-at:URL         a principal whose calendar home is URL, on another server (as iCloud's
                        are): every PROPFIND names the principal /principal/ and the home URL
    gzip                a collection of task-1 behind a proxy that compresses every answer
                        (Content-Encoding: gzip), as nginx in front of Nextcloud may
    gzip-bomb:BYTES     a 207 of some hundreds of kilobytes that inflates to BYTES (gzip)
    digest:USER:PASS    a collection of task-1 that takes only HTTP Digest (RFC 7616, MD5,
                        qop=auth), as Baikal and older SabreDAV servers do by default: a request
                        without it, or with a wrong one, is answered 401 with a challenge;
                        logs `auth basic`, `auth none`, `auth digest ok` or `auth digest wrong`,
                        the size of each request's body (`GET with 0 bytes`), and a PUT's size
                        and If-Match (it is made: 204)
    digest:USER:PASS:once
                        the same, each challenge's nonce good for one request: a nonce used
                        before is answered 401 with a new challenge that does not say it is
                        stale (logs `auth digest used`), as a strict server may
    basic:USER:PASS     the same collection, taking only HTTP Basic (as Radicale, Nextcloud
                        and most servers behind TLS do): logs `auth none`, `auth digest`,
                        `auth basic ok` or `auth basic wrong`, and a PUT's size and If-Match
    no-etags            a collection of task-1 that gives no ETag (in a multiget, a query nor a
                        GET); a PUT with If-None-Match: * is refused (412, the task is there),
                        any other PUT is made (204, logged as `PUT over CONDITION`)
    huge-object         a collection of task-1 and task-2, whose object is 2.3 MB (a long
                        DESCRIPTION)
    read-only           a collection of task-1 shared read-only: every PUT and DELETE is
                        answered 403 with DAV:need-privileges (RFC 3744), as Nextcloud does
    foreign-hrefs:URL   a collection (Basic, ana:secret) whose answers name task-1 and beside it
                        objects outside it: ../other/x.ics, %2e%2e/%2e%2e/etc/x.ics, and URL
                        (on another server); a multiget gives an object for each href asked,
                        a GET and a PUT of task-1 are answered (204, logged as `PUT PATH`)
    basic:USER:PASS:STATUS
                        the same, a request without credentials answered STATUS (403, 404)
                        with no challenge, as a server that hides what it holds may
"""
import base64
import gzip
import hashlib
import re
import ssl
import sys
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
TASK = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:task-1\r\nSUMMARY:Buy bread\r\n"
    "GEO:38.7105;-9.1366\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
)


def multistatus(responses):
    return '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" ' \
        'xmlns:cs="http://calendarserver.org/ns/">' + "".join(responses) + "</d:multistatus>"


def response(href, props):
    return f"<d:response><d:href>{href}</d:href><d:propstat><d:prop>{props}</d:prop>" \
        "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"


def collection(extra=""):
    return response(
        "/tasks/",
        "<cs:getctag>1</cs:getctag><d:resourcetype><d:collection/><c:calendar/></d:resourcetype>"
        '<c:supported-calendar-component-set><c:comp name="VTODO"/></c:supported-calendar-component-set>' + extra)


COLLECTION = collection()
PROPFINDS = [0]


def read_one_task(handler, request, href, etags):
    """Answers a read of a collection of the one task at `href`: a multiget, a calendar-query,
    a GET, with the ETags `etags` gives for each ("multiget", "query", "get"); False for
    another request."""
    if handler.command == "REPORT" and "calendar-multiget" in request:
        data = TASK.replace("\r", "&#13;")
        handler.answer(207, multistatus(
            [response(href, f"<d:getetag>{etags['multiget']}</d:getetag><c:calendar-data>{data}</c:calendar-data>")]))
    elif handler.command == "REPORT":
        handler.answer(207, multistatus([response(href, f"<d:getetag>{etags['query']}</d:getetag>")]))
    elif handler.command == "GET":
        handler.answer(200, TASK, content_type="text/calendar", headers=[("ETag", etags["get"])])
    else:
        return False
    return True


def one_task(handler, request):
    """Answers a PROPFIND of the collection of task-1, or a read of it (its ETag "1"); False for
    another request."""
    if handler.command == "PROPFIND":
        handler.answer(207, multistatus([COLLECTION]))
        return True
    return read_one_task(handler, request, "/tasks/task-1.ics", {"multiget": '"1"', "query": '"1"', "get": '"1"'})


MULTIGETS = [0]


def weak_etag(handler, request):
    """The weak-etag mode."""
    if handler.command == "PROPFIND":
        return handler.answer(207, multistatus([COLLECTION]))
    if handler.command == "REPORT" and "calendar-multiget" in request:
        MULTIGETS[0] += 1
    if read_one_task(handler, request, "/tasks/task-1.ics", {
            "multiget": '"1"' if MULTIGETS[0] == 1 else '"2"', "query": '"1"', "get": 'W/"2"'}):
        return
    if handler.command == "PUT" and handler.headers.get("If-Match") == '"2"':
        print(f"PUT made over {handler.headers.get('If-Match')}", file=sys.stderr, flush=True)
        return handler.answer(204, "", content_type="text/plain", headers=[("ETag", 'W/"3"')])
    return handler.answer(412, "changed", content_type="text/plain")


def web_root(handler, request):
    """The web-root mode."""
    if handler.path == "/.well-known/caldav":
        return handler.answer(301, "", content_type="text/plain", headers=[("Location", "/dav/")])
    if not handler.path.startswith("/dav/"):
        return handler.answer(200, "<html><body>Log in</body></html>", content_type="text/html")
    if not request:
        return handler.answer(400, "a request without a body", content_type="text/plain")
    if handler.path == "/dav/":
        return handler.answer(207, multistatus([response(
            "/dav/", "<d:current-user-principal><d:href>/dav/principals/ana/</d:href></d:current-user-principal>")]))
    if handler.path == "/dav/principals/ana/":
        return handler.answer(207, multistatus([response(
            handler.path, "<c:calendar-home-set><d:href>/dav/calendars/ana/</d:href></c:calendar-home-set>")]))
    if handler.path == "/dav/calendars/ana/":
        def calendar(name, component):
            return response(
                f"/dav/calendars/ana/{name}/", f"<d:displayname>{name}</d:displayname>"
                "<d:resourcetype><d:collection/><c:calendar/></d:resourcetype>"
                f'<c:supported-calendar-component-set><c:comp name="{component}"/></c:supported-calendar-component-set>')
        home = response("/dav/calendars/ana/", "<d:resourcetype><d:collection/></d:resourcetype>")
        return handler.answer(207, multistatus([home, calendar("errands", "VTODO"), calendar("personal", "VEVENT")]))
    return handler.answer(404, "no such thing", content_type="text/plain")


NONCES = [0]


def digest(handler, request, user, password, once=False):
    """The digest:USER:PASS and digest:USER:PASS:once modes."""
    realm, nonce = "geoalarm tests", f"5f0c1e2d{NONCES[0]}"
    def md5(text):
        return hashlib.md5(text.encode()).hexdigest()
    print(f"{handler.command} with {len(request)} bytes", file=sys.stderr, flush=True)
    scheme, _, fields = handler.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "digest":
        given = {name: quoted or plain for name, quoted, plain in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]*))', fields)}
        secret = md5(f"{user}:{realm}:{password}")
        expected = md5(":".join([secret, nonce, given.get("nc", ""), given.get("cnonce", ""), given.get("qop", ""),
                                 md5(f"{handler.command}:{given.get('uri', '')}")]))
        ok = given.get("username") == user and given.get("response") == expected
        used = given.get("nonce") != nonce
        print(f"auth digest {'used' if used else 'ok' if ok else 'wrong'}", file=sys.stderr, flush=True)
        if once:
            NONCES[0] += 1
            nonce = f"5f0c1e2d{NONCES[0]}"
    else:
        ok = False
        print(f"auth {scheme.lower() or 'none'}", file=sys.stderr, flush=True)
    if not ok:
        return handler.answer(401, "", content_type="text/plain", headers=[(
            "WWW-Authenticate", f'Digest realm="{realm}", nonce="{nonce}", qop="auth", algorithm=MD5')])
    serve_task(handler, request)


def basic(handler, request, user, password, anonymous=None):
    """The basic:USER:PASS and basic:USER:PASS:STATUS modes."""
    scheme, _, given = handler.headers.get("Authorization", "").partition(" ")
    if not scheme and anonymous:
        print("auth none", file=sys.stderr, flush=True)
        return handler.answer(int(anonymous), "", content_type="text/plain")
    if scheme.lower() == "basic":
        ok = base64.b64decode(given.strip() or "").decode(errors="replace") == f"{user}:{password}"
        print(f"auth basic {'ok' if ok else 'wrong'}", file=sys.stderr, flush=True)
    else:
        ok = False
        print(f"auth {scheme.lower() or 'none'}", file=sys.stderr, flush=True)
    if not ok:
        # A realm with a comma and a scheme's name in it: only the challenge's own scheme counts.
        return handler.answer(401, "", content_type="text/plain", headers=[(
            "WWW-Authenticate", 'Basic realm="geoalarm tests, Digest-free", charset="UTF-8"')])
    serve_task(handler, request)


def foreign_hrefs(handler, request, elsewhere):
    """The foreign-hrefs:URL mode."""
    scheme, _, given = handler.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "basic" or base64.b64decode(given.strip() or "").decode(errors="replace") != "ana:secret":
        return handler.answer(401, "", content_type="text/plain", headers=[("WWW-Authenticate", 'Basic realm="tests"')])
    hrefs = ["/tasks/task-1.ics", "/tasks/../other/x.ics", "/tasks/%2e%2e/%2e%2e/etc/x.ics", elsewhere]
    if handler.command == "PROPFIND":
        return handler.answer(207, multistatus([collection("<d:sync-token>f1</d:sync-token>")]))
    if handler.command == "REPORT" and "calendar-multiget" in request:
        items = []
        for number, href in enumerate(re.findall(r"<d:href>([^<]*)</d:href>", request)):
            data = TASK.replace("task-1", f"task-{number + 1}").replace("\r", "&#13;")
            items.append(response(href, f'<d:getetag>"1"</d:getetag><c:calendar-data>{data}</c:calendar-data>'))
        return handler.answer(207, multistatus(items))
    if handler.command == "REPORT":
        return handler.answer(207, multistatus(
            [response(href.replace("&", "&amp;"), '<d:getetag>"1"</d:getetag>') for href in hrefs]).replace(
            "</d:multistatus>", "<d:sync-token>f1</d:sync-token></d:multistatus>"))
    if handler.command == "GET" and handler.path == "/tasks/task-1.ics":
        return handler.answer(200, TASK, content_type="text/calendar", headers=[("ETag", '"1"')])
    if handler.command == "PUT":
        print(f"PUT {handler.path}", file=sys.stderr, flush=True)
        return handler.answer(204, "", content_type="text/plain", headers=[("ETag", '"2"')])
    return handler.answer(404, "no such thing", content_type="text/plain")


def serve_task(handler, request):
    """What the digest and basic modes answer once the credentials are right: a PUT is made."""
    if handler.command == "PUT":
        print(f"PUT of {len(request)} bytes over {handler.headers.get('If-Match')}", file=sys.stderr, flush=True)
        return handler.answer(204, "", content_type="text/plain", headers=[("ETag", '"2"')])
    if not one_task(handler, request):
        handler.answer(405, "not here", content_type="text/plain")


def gzip_bomb(handler, size):
    """The gzip-bomb:BYTES mode, its inflated body never held whole."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = b"<?xml version='1.0'?><d:multistatus xmlns:d='DAV:'>"
    parts = [compressor.compress(head)]
    block = b" " * (1 << 20)
    for start in range(len(head), size, len(block)):
        parts.append(compressor.compress(block[: size - start]))
    parts.append(compressor.flush())
    data = b"".join(parts)
    handler.send_response(207)
    handler.send_header("Content-Type", "application/xml")
    handler.send_header("Content-Encoding", "gzip")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    print(f"sent {len(data)} bytes for {size}", file=sys.stderr, flush=True)
    try:
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass


def moved(handler, request, status, absolute):
    """The moved:CODE and moved:CODE:absolute modes."""
    if handler.path.startswith("/tasks/"):
        target = "/moved/" + handler.path[7:]
        if absolute:
            target = ("HTTPS://" if len(sys.argv) > 2 else "HTTP://") + handler.headers["Host"] + target
        return handler.answer(status, "", content_type="text/plain", headers=[("Location", target)])
    if handler.command in ("PROPFIND", "REPORT") and not request:
        return handler.answer(400, "a request without a body", content_type="text/plain")
    if handler.command == "PROPFIND":
        return handler.answer(207, multistatus([collection("<d:sync-token>m1</d:sync-token>")]))
    if read_one_task(handler, request, "/moved/task-1.ics", {"multiget": '"1"', "query": '"1"', "get": '"1"'}):
        return
    print(f"{handler.command} {handler.path}: body of {len(request)} bytes", file=sys.stderr, flush=True)
    return handler.answer(204, "", content_type="text/plain", headers=[("ETag", '"2"')])


def sync_parts(handler, request, parts):
    """The sync-parts:N mode."""
    def etag(href):
        return '"1b"' if href == "/tasks/task-1.ics" else f'"{href}"'
    if handler.command == "PROPFIND":
        PROPFINDS[0] += 1
        token = "t0" if PROPFINDS[0] == 1 else f"t{parts}"
        return handler.answer(207, multistatus([collection(f"<d:sync-token>{token}</d:sync-token>")]))
    if "calendar-multiget" in request:
        items = []
        for href in re.findall(r"<d:href>([^<]*)</d:href>", request):
            uid = href.rsplit("/", 1)[1].removesuffix(".ics")
            data = TASK.replace("task-1", uid).replace("\r", "&#13;")
            items.append(response(href, f"<d:getetag>{etag(href)}</d:getetag><c:calendar-data>{data}</c:calendar-data>"))
        return handler.answer(207, multistatus(items))
    if "sync-collection" not in request:
        return handler.answer(207, multistatus([response("/tasks/task-0.ics", '<d:getetag>"0"</d:getetag>')]))
    found = re.search(r"<d:sync-token>t(\d+)</d:sync-token>", request)
    number = int(found.group(1)) if found else parts
    if number >= parts:
        return handler.answer(403, "invalid sync token", content_type="text/plain")
    if number + 1 < parts:
        href = f"/tasks/task-{number + 1}.ics"
        items = [response(href, f"<d:getetag>{etag(href)}</d:getetag>"),
                 '<d:response><d:href>/tasks/</d:href><d:status>HTTP/1.1 507 Insufficient Storage</d:status></d:response>']
    else:
        items = ['<d:response><d:href>/tasks/task-0.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>',
                 response("/tasks/task-1.ics", '<d:getetag>"1b"</d:getetag>')]
    body = multistatus(items).replace("</d:multistatus>", f"<d:sync-token>t{number + 1}</d:sync-token></d:multistatus>")
    return handler.answer(207, body)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def answer(self, status, body, content_type="application/xml; charset=utf-8", headers=()):
        data = body.encode() if isinstance(body, str) else body
        if MODE == "gzip" and data:
            data = gzip.compress(data)
            headers = list(headers) + [("Content-Encoding", "gzip")]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        print(f"{self.command} {self.path}", file=sys.stderr, flush=True)
        length = int(self.headers.get("Content-Length") or 0)
        request = self.rfile.read(length).decode(errors="replace") if length else ""
        if MODE == "redirect-loop":
            return self.answer(302, "", headers=[("Location", self.path)])
        if MODE.startswith("status:"):
            return self.answer(int(MODE.split(":")[1]), "no", content_type="text/plain")
        if MODE.startswith("huge:"):
            size = int(MODE.split(":")[1])
            self.send_response(207)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b"<x>" * 21845
            sent = 0
            try:
                while sent < size:
                    part = chunk[: size - sent]
                    self.wfile.write(part)
                    sent += len(part)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if MODE.startswith("huge-header:"):
            return self.answer(207, "<d:multistatus xmlns:d='DAV:'/>", headers=[("X-Filler", "x" * int(MODE.split(":")[1]))])
        if MODE.startswith("many-headers:"):
            return self.answer(207, "<d:multistatus xmlns:d='DAV:'/>",
                               headers=[(f"X-Filler-{n}", "x" * 1024) for n in range(int(MODE.split(":")[1]))])
        if MODE.startswith("gzip-bomb:"):
            return gzip_bomb(self, int(MODE.split(":")[1]))
        if MODE == "gzip" and one_task(self, request):
            return
        if MODE == "endless-xml":
            self.send_response(207)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"<d:multistatus xmlns:d='DAV:'>" + b"<d:response>" * 20000
            try:
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except (BrokenPipeError, ConnectionResetError):
                return
        if MODE == "trickle":
            self.send_response(207)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            sent = 0
            try:
                while True:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    sent += 1
                    print(f"trickled {sent}", file=sys.stderr, flush=True)
                    time.sleep(2)
            except (BrokenPipeError, ConnectionResetError):
                print(f"gone after {sent} bytes", file=sys.stderr, flush=True)
                return
        if MODE == "malformed":
            return self.answer(207, "<d:multistatus xmlns:d='DAV:'><d:response><d:href>/a</d:multistatus>")
        if MODE == "not-xml":
            return self.answer(207, "<html><body><form>Log in</form></body></html>", content_type="text/html")
        if MODE.startswith("many:"):
            count = int(MODE.split(":")[1])
            if self.command == "PROPFIND":
                return self.answer(207, multistatus([COLLECTION]))
            items = (response(f"/tasks/{n}.ics", f'<d:getetag>"{n}"</d:getetag>') for n in range(count))
            return self.answer(207, multistatus(items))
        if MODE == "etag-never-matches":
            if self.command == "PROPFIND":
                return self.answer(207, multistatus([COLLECTION]))
            now = f'"{time.time()}"'
            if read_one_task(self, request, "/tasks/task-1.ics", {"multiget": now, "query": now, "get": now}):
                return
            if self.command == "PUT":
                return self.answer(412, "changed", content_type="text/plain")
        if MODE == "weak-etag":
            return weak_etag(self, request)
        if MODE == "web-root":
            return web_root(self, request)
        if MODE.startswith("home-at:") and self.command == "PROPFIND":
            home = MODE.split(":", 1)[1]
            return self.answer(207, multistatus([response(
                self.path, "<d:current-user-principal><d:href>/principal/</d:href></d:current-user-principal>"
                f"<c:calendar-home-set><d:href>{home}</d:href></c:calendar-home-set>")]))
        if MODE.startswith("moved-to:"):
            return self.answer(301, "", content_type="text/plain", headers=[("Location", MODE.split(":", 1)[1])])
        if MODE.startswith("elsewhere:"):
            if self.path == "/.well-known/caldav":
                return self.answer(301, "", content_type="text/plain", headers=[("Location", MODE.split(":", 1)[1])])
            return self.answer(200, "<html><body>Log in</body></html>", content_type="text/html")
        if MODE.startswith("moved:"):
            return moved(self, request, int(MODE.split(":")[1]), MODE.split(":")[2:] == ["absolute"])
        if MODE.startswith("digest:"):
            return digest(self, request, *MODE.split(":")[1:3], once=MODE.endswith(":once"))
        if MODE == "huge-object":
            if self.command == "PROPFIND":
                return self.answer(207, multistatus([COLLECTION]))
            hrefs = ["/tasks/task-1.ics", "/tasks/task-2.ics"]
            if self.command == "REPORT" and "calendar-multiget" in request:
                huge = TASK.replace("task-1", "task-2").replace("SUMMARY:", "DESCRIPTION:" + "x" * 2_300_000 + "\r\nSUMMARY:")
                items = [response(href, f'<d:getetag>"{n}"</d:getetag><c:calendar-data>{data.replace(chr(13), "&#13;")}</c:calendar-data>')
                         for n, (href, data) in enumerate(zip(hrefs, [TASK, huge]))]
                return self.answer(207, multistatus(items))
            if self.command == "REPORT":
                return self.answer(207, multistatus([response(href, f'<d:getetag>"{n}"</d:getetag>') for n, href in enumerate(hrefs)]))
        if MODE == "no-etags":
            if self.command == "PUT":
                condition = self.headers.get("If-Match") or (self.headers.get("If-None-Match") and "If-None-Match") or "nothing"
                print(f"PUT over {condition}", file=sys.stderr, flush=True)
                return self.answer(412 if condition == "If-None-Match" else 204, "", content_type="text/plain")
            if self.command == "PROPFIND":
                return self.answer(207, multistatus([COLLECTION]))
            if self.command == "REPORT" and "calendar-multiget" in request:
                data = TASK.replace("\r", "&#13;")
                return self.answer(207, multistatus([response("/tasks/task-1.ics", f"<c:calendar-data>{data}</c:calendar-data>")]))
            if self.command == "REPORT":
                return self.answer(207, multistatus([response("/tasks/task-1.ics", "<d:resourcetype/>")]))
            if self.command == "GET":
                return self.answer(200, TASK, content_type="text/calendar")
        if MODE == "read-only":
            if self.command in ("PUT", "DELETE"):
                return self.answer(403, '<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:need-privileges><d:resource>'
                                   f'<d:href>{self.path}</d:href><d:privilege><d:write-content/></d:privilege></d:resource>'
                                   '</d:need-privileges></d:error>')
            if one_task(self, request):
                return
        if MODE.startswith("foreign-hrefs:"):
            return foreign_hrefs(self, request, MODE.split(":", 1)[1])
        if MODE.startswith("basic:"):
            return basic(self, request, *MODE.split(":")[1:4])
        if MODE.startswith("sync-parts:"):
            return sync_parts(self, request, int(MODE.split(":")[1]))
        return self.answer(500, "unknown mode", content_type="text/plain")

    do_GET = do_PUT = do_DELETE = do_PROPFIND = do_REPORT = handle_any


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if len(sys.argv) == 4:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[2], sys.argv[3])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


main()
