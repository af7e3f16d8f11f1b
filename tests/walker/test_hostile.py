"""Hostile inputs to the walker, over real loopback HTTP.

Every web input is hostile. Each case here must end with a named walker problem
(docs/commands/walk.md), in bounded time and memory, keeping every entry completed before
things went wrong, and without requesting anything the file points at (DTDs, entities,
stylesheets, includes).

Static payloads live in fixtures/hostile/; the big ones (bombs, 60 MB files, endless and
dripping bodies) are written by routes at test time and never stored whole.
"""

from __future__ import annotations

import codecs
import struct
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import pytest

from auditor.http import HttpOptions
from auditor.models import SitemapEntry
from auditor.walker import Walk, WalkOptions, walk
from tests.loopback import FIXTURES, LoopbackServer, send

NS = b'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
MiB = 1024 * 1024

# -- infrastructure ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    # One server for the whole module keeps its many small cases cheap.
    with LoopbackServer(FIXTURES / "hostile") as server:
        yield server


@pytest.fixture
def server(shared_server: LoopbackServer) -> LoopbackServer:
    """The module's server on fixtures/hostile, with no routes and an empty log."""
    shared_server.routes.clear()
    shared_server.log.clear()
    return shared_server


def run(target: str, **http: object) -> tuple[list[SitemapEntry], Walk]:
    w = walk(target, WalkOptions(http=HttpOptions(**http)))
    return list(w), w


def codes(w: Walk, sitemap: str) -> list[str]:
    return [p.code for p in w.problems if p.sitemap == sitemap]


def locs(entries: list[SitemapEntry]) -> list[str]:
    return [e.loc for e in entries]


def urlset_head(origin: str, pages: list[str]) -> bytes:
    """An XML declaration, the urlset start tag and one complete <url> per page."""
    urls = b"".join(b"<url><loc>%s/%s</loc></url>\n" % (origin.encode(), p.encode()) for p in pages)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset ' + NS + b">\n" + urls


def start_raw(handler, headers: dict[str, str], status: int = 200) -> None:
    """Status line and headers only; the route writes the body itself."""
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.close_connection = True


def write_chunk(handler, data: bytes) -> None:
    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


def gzip_bomb(head: bytes, filler: bytes, inflated: int) -> bytes:
    """A gzip member: ``head``, then ``filler`` repeated to about ``inflated`` bytes.

    Built in a fraction of a second whatever the size: one MiB of filler is compressed once
    after a full flush (so it refers to nothing before it) and its bytes are repeated.
    """
    block = filler * (MiB // len(filler))
    one = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    segment = one.compress(block) + one.flush(zlib.Z_FULL_FLUSH)
    first = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    count = max((inflated - len(head)) // len(block), 1)
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    size = len(head) + count * len(block)
    return b"".join(
        [
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff",  # gzip header, no name, mtime 0
            first.compress(head) + first.flush(zlib.Z_FULL_FLUSH),
            segment * count,
            zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush(),  # the final block
            struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF),
        ]
    )


def test_gzip_bomb_helper_builds_a_valid_stream():
    bomb = gzip_bomb(b"<head>", b" ", 3 * MiB)
    data = zlib.decompress(bomb, 16 + zlib.MAX_WBITS)
    assert data.startswith(b"<head>   ") and data.strip() == b"<head>"
    assert len(data) >= 2 * MiB and len(bomb) < 10_000


class PaddedUrlset:
    """A urlset of one <url> every ``every`` bytes (spaces between), streamed, never stored."""

    def __init__(self, origin: str, every: int, total: int) -> None:
        self.head = b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset ' + NS + b">\n"
        self.origin, self.every, self.total = origin.encode(), every, total

    def entry(self, k: int) -> bytes:
        return b"<url><loc>%s/page/%08d</loc></url>" % (self.origin, k)

    def blocks(self) -> Iterator[bytes]:
        yield self.head
        sent, k = len(self.head), 0
        while sent < self.total:
            entry = self.entry(k)
            block = (entry + b" " * (self.every - len(entry)))[: self.total - sent]
            yield block
            sent += len(block)
            k += 1

    def complete_before(self, cap: int) -> int:
        """How many entries end at or before byte ``cap``."""
        size = len(self.entry(0))
        return sum(
            1
            for k in range(self.total // self.every + 1)
            if len(self.head) + k * self.every + size <= cap
        )

    def route(self, handler) -> None:
        start_raw(handler, {"Content-Type": "application/xml", "Content-Length": str(self.total)})
        for block in self.blocks():
            handler.wfile.write(block)


# -- XML attacks --------------------------------------------------------------------------------

ATTACKS = [
    "billion-laughs.xml",
    "quadratic-blowup.xml",
    "xxe-local-file.xml",
    "xxe-http.xml",
    "external-dtd.xml",
    "external-dtd-public.xml",
    "parameter-entities.xml",
    "doctype-after-comment.xml",
    "doctype-after-pi.xml",
    "cyclic-entities.xml",
    "unparsed-entity.xml",
    "entity-in-attribute.xml",
]


def utf16(document: bytes, order: str) -> bytes:
    """The same document in UTF-16 with a byte order mark, its declaration saying so."""
    text = document.decode("utf-8").replace('encoding="UTF-8"', 'encoding="UTF-16"')
    if order == "le":
        return codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    return codecs.BOM_UTF16_BE + text.encode("utf-16-be")


def assert_refused_unexpanded(server: LoopbackServer, path: str, entries, w, elapsed) -> None:
    url = server.url(path)
    assert entries == []
    assert codes(w, url) == ["forbidden-xml"], w.problems
    assert [p.sitemap for p in w.problems] == [url]
    assert not w.readable
    # Nothing the document points at was fetched: no DTD, no entity, no stylesheet.
    assert server.paths() == [path]
    assert not any("root:" in p.detail for p in w.problems)
    assert elapsed < 5


@pytest.mark.parametrize("name", ATTACKS)
def test_xml_attack_is_refused_with_nothing_expanded(server, name):
    started = time.monotonic()
    entries, w = run(server.url("/" + name), timeout=2)
    assert_refused_unexpanded(server, "/" + name, entries, w, time.monotonic() - started)


@pytest.mark.parametrize("order", ["le", "be"])
@pytest.mark.parametrize("name", ATTACKS)
def test_xml_attack_in_utf16_is_refused_with_nothing_expanded(server, name, order):
    body = utf16(server.render(name), order)
    server.routes["/utf16.xml"] = lambda h: send(h, 200, body)
    started = time.monotonic()
    entries, w = run(server.url("/utf16.xml"), timeout=2)
    assert_refused_unexpanded(server, "/utf16.xml", entries, w, time.monotonic() - started)


def test_xml_attack_hidden_by_utf7_is_refused(server):
    # In UTF-7 the DOCTYPE reads "+ADw-!DOCTYPE": only a parser that decodes first sees it.
    started = time.monotonic()
    entries, w = run(server.url("/utf7-doctype.xml"), timeout=2)
    elapsed = time.monotonic() - started
    url = server.url("/utf7-doctype.xml")
    assert entries == []
    assert codes(w, url) == ["forbidden-xml"]
    assert server.paths() == ["/utf7-doctype.xml"]
    assert elapsed < 5


@pytest.mark.parametrize(
    "name", ["billion-laughs.xml", "xxe-local-file.xml", "cyclic-entities.xml"]
)
def test_xml_attack_in_a_local_file_is_refused(name):
    path = FIXTURES / "hostile" / name
    started = time.monotonic()
    entries, w = run(str(path))
    assert entries == []
    assert [p.code for p in w.problems] == ["forbidden-xml"]
    assert not any("root:" in p.detail for p in w.problems)
    assert time.monotonic() - started < 5


def test_doctype_named_html_with_an_entity_subset_is_forbidden_xml(server):
    # Naming the DOCTYPE "html" must not turn an entity attack on a urlset into "an HTML page".
    entries, w = run(server.url("/doctype-html-with-entities.xml"), timeout=2)
    assert entries == []
    assert server.paths() == ["/doctype-html-with-entities.xml"]
    assert codes(w, server.url("/doctype-html-with-entities.xml")) == ["forbidden-xml"]


def test_xinclude_is_not_processed(server):
    entries, w = run(server.url("/xinclude.xml"), timeout=2)
    assert locs(entries) == [server.url("/one"), server.url("/two")]
    assert server.paths() == ["/xinclude.xml"]
    assert w.problems == []


def test_undefined_entity_is_not_well_formed_keeping_entries_before(server):
    entries, w = run(server.url("/undefined-entity.xml"), timeout=2)
    assert locs(entries) == [server.url("/one"), server.url("/two")]
    assert codes(w, server.url("/undefined-entity.xml")) == ["not-well-formed"]


# -- size -------------------------------------------------------------------------------------


def test_real_gzip_bomb_stops_at_the_cap_keeping_entries_in_bounded_memory(server):
    inflated = 1024 * MiB  # 1 GiB of spaces after three entries; about 1 MB on the wire
    bomb = gzip_bomb(urlset_head(server.origin, ["a", "b", "c"]), b" ", inflated)
    assert len(bomb) < 2 * MiB
    server.routes["/bomb.xml"] = lambda h: send(h, 200, bomb)
    tracemalloc.start()
    try:
        started = time.monotonic()
        entries, w = run(server.url("/bomb.xml"), timeout=20)  # the default 50 MB cap
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert locs(entries) == [server.url("/a"), server.url("/b"), server.url("/c")]
    assert "too-large" in codes(w, server.url("/bomb.xml"))
    (record,) = w.files
    assert record.gzipped and record.bytes_read == 52_428_800
    # Streamed: about what a plain file costs, nowhere near the cap, let alone 1 GiB.
    assert peak < 32 * MiB, f"peak {peak / MiB:.0f} MiB"
    assert elapsed < 15


@pytest.mark.parametrize("content_encoding", [None, "gzip"])
def test_gzip_bomb_small_cap(server, content_encoding):
    bomb = gzip_bomb(urlset_head(server.origin, ["a", "b"]), b"<!-- lol -->", 64 * MiB)
    headers = {"Content-Encoding": content_encoding} if content_encoding else {}
    server.routes["/bomb.xml"] = lambda h: send(h, 200, bomb, "application/xml", headers)
    started = time.monotonic()
    entries, w = run(server.url("/bomb.xml"), timeout=5, max_bytes=MiB)
    assert locs(entries) == [server.url("/a"), server.url("/b")]
    assert "too-large" in codes(w, server.url("/bomb.xml"))
    assert w.files[0].bytes_read == MiB
    assert time.monotonic() - started < 5


def test_real_60_mb_urlset_stops_at_the_50_mb_cap_keeping_entries_before(server):
    body = PaddedUrlset(server.origin, every=MiB, total=60 * MiB)
    server.routes["/huge.xml"] = body.route
    tracemalloc.start()
    try:
        started = time.monotonic()
        entries, w = run(server.url("/huge.xml"), timeout=30)
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    expected = body.complete_before(52_428_800)
    assert expected == 50
    assert locs(entries) == [server.url(f"/page/{k:08d}") for k in range(expected)]
    assert "too-large" in codes(w, server.url("/huge.xml"))
    assert w.files[0].bytes_read == 52_428_800
    assert peak < 32 * MiB, f"peak {peak / MiB:.0f} MiB for a streamed file"
    assert elapsed < 15


def test_big_urlset_small_cap_keeps_every_entry_before_the_cap(server):
    body = PaddedUrlset(server.origin, every=10_000, total=3_000_000)
    server.routes["/big.xml"] = body.route
    cap = 1_000_000
    entries, w = run(server.url("/big.xml"), timeout=5, max_bytes=cap)
    expected = body.complete_before(cap)
    assert expected == 100
    assert locs(entries) == [server.url(f"/page/{k:08d}") for k in range(expected)]
    assert "too-large" in codes(w, server.url("/big.xml"))


def test_endless_chunked_response_is_bounded(server):
    stop = threading.Event()

    def endless(handler):
        start_raw(handler, {"Content-Type": "application/xml", "Transfer-Encoding": "chunked"})
        write_chunk(handler, urlset_head(server.origin, []))
        k = 0
        while not stop.is_set():
            write_chunk(handler, b"<url><loc>%s/e/%d</loc></url>\n" % (server.origin.encode(), k))
            k += 1

    server.routes["/endless.xml"] = endless
    try:
        started = time.monotonic()
        entries, w = run(server.url("/endless.xml"), timeout=3, max_bytes=256 * 1024)
        elapsed = time.monotonic() - started
    finally:
        stop.set()
    found = codes(w, server.url("/endless.xml"))
    assert "too-large" in found or "timeout" in found
    assert len(entries) > 100
    assert locs(entries) == [server.url(f"/e/{k}") for k in range(len(entries))]
    assert elapsed < 6


def test_one_huge_token_is_read_in_linear_time(server):
    # A comment that never closes (an open attribute value or tag behaves the same): expat
    # 2.5 re-scans an unfinished token from its start on every feed, so feeding it 64 KiB
    # at a time costs quadratic time. The same bytes as plain whitespace are the floor.
    opener = b"<!--"
    size = 24 * MiB  # the cap; the file is 1 MiB longer
    block = b" " * 65_536

    def stream(prefix: bytes):
        def route(handler):
            total = len(prefix) + size + MiB
            start_raw(handler, {"Content-Type": "application/xml", "Content-Length": str(total)})
            handler.wfile.write(prefix)
            for _ in range((size + MiB) // len(block)):
                handler.wfile.write(block)

        return route

    head = urlset_head(server.origin, ["a"])
    server.routes["/floor.xml"] = stream(head)
    server.routes["/token.xml"] = stream(head + opener)
    started = time.monotonic()
    run(server.url("/floor.xml"), timeout=30, max_bytes=size)
    floor = time.monotonic() - started
    started = time.monotonic()
    entries, w = run(server.url("/token.xml"), timeout=30, max_bytes=size)
    elapsed = time.monotonic() - started
    assert locs(entries) == [server.url("/a")]
    assert "too-large" in codes(w, server.url("/token.xml"))
    assert elapsed < max(20 * floor, 1.5), f"{elapsed:.1f} s against a floor of {floor:.2f} s"


# -- time ---------------------------------------------------------------------------------------


def drip_route(head: bytes, rest: bytes, hold: threading.Event, *, chunked: bool):
    """Send ``head`` at once, then ``rest`` one byte every 0.1 s."""

    def route(handler):
        headers = {"Content-Type": "application/xml"}
        if chunked:
            headers["Transfer-Encoding"] = "chunked"
        else:
            headers["Content-Length"] = str(len(head) + len(rest))
        start_raw(handler, headers)
        write = (lambda b: write_chunk(handler, b)) if chunked else handler.wfile.write
        write(head)
        for i in range(len(rest)):
            if hold.wait(0.1):
                return
            write(rest[i : i + 1])

    return route


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
def test_dripping_body_times_out_keeping_entries_completed_before(server, hold, chunked):
    head = urlset_head(server.origin, ["a", "b", "c"])
    rest = b"<url><loc>%s/never</loc></url>\n</urlset>\n" % server.origin.encode()
    server.routes["/drip.xml"] = drip_route(head, rest, hold, chunked=chunked)
    started = time.monotonic()
    entries, w = run(server.url("/drip.xml"), timeout=1)
    elapsed = time.monotonic() - started
    assert elapsed < 5
    assert locs(entries) == [server.url("/a"), server.url("/b"), server.url("/c")]
    assert codes(w, server.url("/drip.xml")) == ["timeout"]


def test_dripping_headers_time_out(server, hold):
    status = b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nX-Slow: " + b"z" * 100

    def route(handler):
        handler.close_connection = True
        for i in range(len(status)):
            if hold.wait(0.1):
                return
            handler.wfile.write(status[i : i + 1])

    server.routes["/slow-headers.xml"] = route
    started = time.monotonic()
    entries, w = run(server.url("/slow-headers.xml"), timeout=0.5)
    assert entries == []
    assert codes(w, server.url("/slow-headers.xml")) == ["timeout"]
    assert time.monotonic() - started < 5


def test_server_that_never_answers_times_out(server, hold):
    def route(handler):
        handler.close_connection = True
        hold.wait(20)

    server.routes["/silent.xml"] = route
    started = time.monotonic()
    entries, w = run(server.url("/silent.xml"), timeout=0.5)
    assert entries == []
    assert codes(w, server.url("/silent.xml")) == ["timeout"]
    assert not w.readable
    assert time.monotonic() - started < 5


def drip_whitespace(head: bytes, hold: threading.Event, framing: str) -> Callable:
    """Send ``head``, then a space every 0.1 s, with the body framed as ``framing`` says."""

    def route(handler):
        headers = {"Content-Type": "application/xml"}
        if framing == "chunked":
            headers["Transfer-Encoding"] = "chunked"
        elif framing == "content-length":
            headers["Content-Length"] = str(len(head) + 10_000)
        start_raw(handler, headers)  # no framing at all: the body ends when the connection does
        write = (lambda b: write_chunk(handler, b)) if framing == "chunked" else handler.wfile.write
        if head:
            write(head)
        while not hold.wait(0.1):
            write(b" ")

    return route


@pytest.mark.parametrize("framing", ["none", "content-length", "chunked"])
@pytest.mark.parametrize("pages", [[], ["a", "b"]], ids=["whitespace-only", "entries-first"])
def test_whitespace_dripped_past_the_deadline_is_a_timeout(server, hold, framing, pages):
    # The deadline ran out: that is the problem, not an "empty response" the cut made.
    head = urlset_head(server.origin, pages) if pages else b""
    server.routes["/ws.xml"] = drip_whitespace(head, hold, framing)
    entries, w = run(server.url("/ws.xml"), timeout=0.5)
    assert locs(entries) == [server.url(f"/{p}") for p in pages]
    assert codes(w, server.url("/ws.xml")) == ["timeout"]


# -- a file cut short is not also "malformed" ----------------------------------------------


def _cut_by_cap(server, hold):
    bomb = gzip_bomb(urlset_head(server.origin, ["a"]), b" ", 8 * MiB)
    return (lambda h: send(h, 200, bomb)), "too-large"


def _cut_by_deadline(server, hold):
    head = urlset_head(server.origin, ["a"])
    return drip_route(head, b"<url><loc>x</loc></url></urlset>", hold, chunked=True), "timeout"


def _cut_by_hang_up(server, hold):
    def route(handler):
        start_raw(handler, {"Content-Type": "application/xml", "Content-Length": "100000"})
        handler.wfile.write(urlset_head(server.origin, ["a"]))

    return route, "http-error"


@pytest.mark.parametrize(
    "make", [_cut_by_cap, _cut_by_deadline, _cut_by_hang_up], ids=["cap", "deadline", "hang-up"]
)
def test_a_file_cut_short_by_the_transfer_has_one_clear_problem(server, hold, make):
    # The reader only sees the document end early; the file itself may be perfectly formed.
    # Calling it "not-well-formed" as well sends the site owner hunting for a fault that
    # is not there.
    route, expected = make(server, hold)
    server.routes["/cut.xml"] = route
    entries, w = run(server.url("/cut.xml"), timeout=0.5, max_bytes=MiB)
    assert locs(entries) == [server.url("/a")]
    assert codes(w, server.url("/cut.xml")) == [expected]


# -- redirects --------------------------------------------------------------------------------


def redirect(location: str) -> Callable:
    return lambda h: send(h, 301, b"", "text/plain", {"Location": location})


def good_urlset(server: LoopbackServer, pages: list[str]) -> Callable:
    body = urlset_head(server.origin, pages) + b"</urlset>\n"
    return lambda h: send(h, 200, body)


def test_same_host_redirect_is_followed_and_reported(server):
    # A robots.txt or index that points at a moved file is worth a line to the site owner.
    server.routes["/old/sitemap.xml"] = redirect("/new/sitemap.xml")
    server.routes["/new/sitemap.xml"] = good_urlset(server, ["a", "b"])
    entries, w = run(server.url("/old/sitemap.xml"), timeout=2)
    assert locs(entries) == [server.url("/a"), server.url("/b")]
    assert [(p.sitemap, p.code) for p in w.problems] == [
        (server.url("/old/sitemap.xml"), "redirect")
    ]
    assert "followed" in w.problems[0].detail
    assert server.url("/new/sitemap.xml") in w.problems[0].detail
    assert w.files[0].final_url == server.url("/new/sitemap.xml")
    assert server.paths() == ["/old/sitemap.xml", "/new/sitemap.xml"]


def test_a_redirect_to_a_missing_file_is_reported_with_its_status(server):
    server.routes["/old.xml"] = redirect("/gone.xml")
    server.routes["/gone.xml"] = lambda h: send(h, 404, b"", "text/plain")
    entries, w = run(server.url("/old.xml"), timeout=2)
    assert entries == []
    assert codes(w, server.url("/old.xml")) == ["redirect", "http-error"]


def test_redirect_loop_is_too_many_redirects(server):
    server.routes["/a.xml"] = redirect("/b.xml")
    server.routes["/b.xml"] = redirect("/a.xml")
    entries, w = run(server.url("/a.xml"), timeout=2)
    assert entries == []
    assert codes(w, server.url("/a.xml")) == ["too-many-redirects"]
    assert len(server.log) <= 6


def test_chain_of_six_redirects_is_too_many(server):
    for n in range(6):
        server.routes[f"/r{n}.xml"] = redirect(f"/r{n + 1}.xml")
    server.routes["/r6.xml"] = good_urlset(server, ["a"])
    entries, w = run(server.url("/r0.xml"), timeout=2)
    assert entries == []
    assert codes(w, server.url("/r0.xml")) == ["too-many-redirects"]
    assert "/r6.xml" not in server.paths()


def test_redirect_to_another_host_is_reported_and_not_followed(server):
    # localhost and 127.0.0.1 are two hosts, here served by the same server: its log shows
    # whether the redirect was followed.
    server.routes["/sitemap.xml"] = redirect(f"http://localhost:{server.port}/elsewhere.xml")
    server.routes["/elsewhere.xml"] = good_urlset(server, ["a"])
    entries, w = run(server.url("/sitemap.xml"), timeout=2)
    assert entries == []
    assert codes(w, server.url("/sitemap.xml")) == ["redirect"]
    assert "/elsewhere.xml" not in server.paths()


def test_redirect_to_another_port_is_reported_and_not_followed(server):
    with LoopbackServer() as other:
        other.routes["/s.xml"] = good_urlset(server, ["a"])
        server.routes["/sitemap.xml"] = redirect(other.url("/s.xml"))
        entries, w = run(server.url("/sitemap.xml"), timeout=2)
        assert entries == []
        problems = [p for p in w.problems if p.sitemap == server.url("/sitemap.xml")]
        assert [p.code for p in problems] == ["redirect"]
        assert "followed" not in problems[0].detail
        assert other.log == []


# -- wrong content ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "html-uppercase-doctype.html",
        "html-lowercase-doctype.html",
        "html-no-doctype.html",
        "html-unquoted-attributes.html",
        "html-xhtml-public-dtd.html",
    ],
)
def test_html_page_with_status_200_is_not_a_sitemap(server, name):
    entries, w = run(server.url("/" + name), timeout=2)
    assert entries == []
    problems = [p for p in w.problems if p.sitemap == server.url("/" + name)]
    assert [p.code for p in problems] == ["not-a-sitemap"], problems
    assert "html" in problems[0].detail.lower()
    assert server.paths() == ["/" + name]  # the XHTML DTD is not fetched


def test_truncated_file_keeps_the_entries_completed_before_the_cut(server):
    entries, w = run(server.url("/truncated.xml"), timeout=2)
    assert locs(entries) == [server.url(p) for p in ("/one", "/two", "/three")]
    assert [e.lastmod_raw for e in entries] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert codes(w, server.url("/truncated.xml")) == ["not-well-formed"]


@pytest.mark.parametrize("name", ["invalid-utf8.xml", "invalid-shift-jis.xml"])
def test_bytes_invalid_in_the_declared_encoding_keep_the_entries_before(server, name):
    entries, w = run(server.url("/" + name), timeout=2)
    assert codes(w, server.url("/" + name)) == ["not-well-formed"]
    assert len(entries) == 3
    assert locs(entries)[1:] == [server.url("/two"), server.url("/three")]


def test_broken_gzip_stream_is_not_well_formed(server):
    garbage = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"not deflate at all" * 20
    server.routes["/broken.xml.gz"] = lambda h: send(h, 200, garbage, "application/gzip")
    entries, w = run(server.url("/broken.xml.gz"), timeout=2)
    assert entries == []
    assert "not-well-formed" in codes(w, server.url("/broken.xml.gz"))


def test_truncated_gzip_stream_keeps_the_entries_inflated_before_the_break(server):
    pages = [f"p{k}" for k in range(2000)]
    whole = urlset_head(server.origin, pages) + b"</urlset>\n"
    packed = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    cut = (packed.compress(whole) + packed.flush())[: -len(whole) // 40]
    server.routes["/cut.xml.gz"] = lambda h: send(h, 200, cut, "application/gzip")
    entries, w = run(server.url("/cut.xml.gz"), timeout=2)
    assert "not-well-formed" in codes(w, server.url("/cut.xml.gz"))
    assert 0 < len(entries) < len(pages)
    assert locs(entries) == [server.url(f"/p{k}") for k in range(len(entries))]


# -- one bad file never sinks the walk -----------------------------------------------------------


def test_bad_children_do_not_sink_the_walk(server, hold):
    origin = server.origin
    children = ["bomb.xml", "drip.xml", "login.xml", "missing.xml", "laughs.xml", "good.xml"]
    index = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex '
        + NS
        + b">\n"
        + b"".join(
            b"<sitemap><loc>%s/%s</loc></sitemap>\n" % (origin.encode(), c.encode())
            for c in children
        )
        + b"</sitemapindex>\n"
    )
    good_pages = [f"good/{k}" for k in range(25)]
    bomb = gzip_bomb(urlset_head(origin, ["bomb/1"]), b" ", 64 * MiB)
    server.routes.update(
        {
            "/index.xml": lambda h: send(h, 200, index),
            "/bomb.xml": lambda h: send(h, 200, bomb),
            "/drip.xml": drip_route(
                urlset_head(origin, ["drip/1"]), b"<url><loc>x</loc></url>" * 10, hold, chunked=True
            ),
            "/login.xml": lambda h: send(
                h, 200, server.render("html-uppercase-doctype.html"), "text/html"
            ),
            "/missing.xml": lambda h: send(h, 404, b"not here", "text/plain"),
            "/laughs.xml": lambda h: send(h, 200, server.render("billion-laughs.xml")),
            "/good.xml": good_urlset(server, good_pages),
        }
    )
    started = time.monotonic()
    entries, w = run(server.url("/index.xml"), timeout=1, max_bytes=MiB)
    elapsed = time.monotonic() - started

    found = set(locs(entries))
    assert {server.url("/" + p) for p in good_pages} <= found
    assert server.url("/bomb/1") in found  # before its cap
    assert server.url("/drip/1") in found  # before its deadline
    assert "too-large" in codes(w, server.url("/bomb.xml"))
    assert "timeout" in codes(w, server.url("/drip.xml"))
    assert codes(w, server.url("/login.xml")) == ["not-a-sitemap"]
    assert codes(w, server.url("/missing.xml")) == ["http-error"]
    assert codes(w, server.url("/laughs.xml")) == ["forbidden-xml"]
    assert codes(w, server.url("/good.xml")) == []
    assert codes(w, server.url("/index.xml")) == []
    assert {f.url for f in w.files} == {server.url("/index.xml")} | {
        server.url("/" + c) for c in children
    }
    assert elapsed < 8
