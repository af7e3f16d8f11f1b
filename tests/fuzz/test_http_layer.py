"""Fuzzing the HTTP door (auditor/http) and everything behind it against misbehaving servers.

A raw-socket server plays drawn faults: garbage status lines, huge or endless
headers, lying Content-Length (short and long), broken chunk framing, every
Content-Encoding (decoded or not), drips, stalls, resets mid-body, endless
bodies, endless redirects. Each is met through one of the entry points: the
client itself (``HttpClient.get`` and the body's iteration), a walk of the
sitemap, the sampler's page download and evidence, the sampler's robots.txt.

Invariants: no exception escapes; every failure is a named value; time stays
within the deadline (plus a generous margin for a noisy machine) and bytes
within the cap; a well-behaved exchange arrives whole and intact; whatever
arrives from a faulty one is a prefix of the real body, and a walk keeps every
entry completed before the fault.
"""

from __future__ import annotations

import time
import tracemalloc
import zlib

import brotli
import zstandard
from hypothesis import event, given
from hypothesis import strategies as st

from auditor.evidence.model import PageEvidence
from auditor.http import FetchFailure, HttpClient, HttpOptions, Response
from auditor.models import PROBLEM_CODES
from auditor.sampler.fetch import download_page, evidence_of
from auditor.sampler.robots import fetch_robots
from auditor.walker import Walk, WalkOptions
from tests.fuzz.budget import fuzz
from tests.fuzz.exchanges import Exchange, Fault, faults, script_for
from tests.fuzz.rawserver import Close, Hang, RawServer, Send

TIMEOUT = 0.75
#: Seconds allowed beyond the deadline: thread start-up, a loaded 2-core machine, GC.
MARGIN = 5.0
CAP = 48 * 1024
MiB = 1024 * 1024
FAILURE_CODES = {"http-error", "timeout", "redirect", "too-many-redirects"}
BODY_CODES = {"too-large", "timeout", "not-well-formed", "http-error", "unsupported-encoding"}
PAGE_ERRORS = FAILURE_CODES | BODY_CODES | {"not-html"}


def options(**overrides: object) -> HttpOptions:
    values: dict = {"timeout": TIMEOUT, "retries": 0, "max_bytes": CAP} | overrides
    return HttpOptions(**values)


def urlset(origin: str, count: int) -> bytes:
    urls = "".join(f"<url><loc>{origin}/page/{i}</loc></url>\n" for i in range(count))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
    ).encode()


def page_html(words: int) -> bytes:
    text = " ".join(f"word{i}" for i in range(words))
    return (
        "<!DOCTYPE html><html><head><title>t</title>"
        '<script type="application/ld+json">{"@type": "Article", '
        '"dateModified": "2024-05-03T10:00:00Z"}</script></head>'
        f"<body><main><p>{text}</p></main></body></html>"
    ).encode()


ROBOTS = b"User-agent: *\nDisallow: /private\n" + b"# padding\n" * 200


def is_prefix(data: bytes, exchange: Exchange) -> bool:
    if exchange.endless:
        unit = exchange.body or b" "
        return data == (unit * (len(data) // len(unit) + 1))[: len(data)]
    return exchange.body.startswith(data)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Fault, str, int]:
    fault = draw(faults())
    entry = draw(st.sampled_from(["client", "client", "walker", "page", "robots"]))
    size = draw(st.integers(0, 40) | st.integers(900, 1_500))
    event(f"entry: {entry}")
    event(f"fault: {fault.head}/{fault.framing}/{fault.encoding}/{fault.delivery}/{fault.ending}")
    return fault, entry, size


# -- the property ------------------------------------------------------------------------------


@fuzz(90)
@given(cases())
def test_a_misbehaving_server_never_breaks_what_reads_from_it(raw, case):
    fault, entry, size = case
    started = time.monotonic()
    {"client": _through_client, "walker": _through_walker, "page": _through_sampler_page}.get(
        entry, _through_sampler_robots
    )(raw, fault, size)
    elapsed = time.monotonic() - started
    event("deadline reached" if elapsed >= TIMEOUT else "within the deadline")
    assert elapsed < TIMEOUT + MARGIN, f"{elapsed:.1f} s for a {TIMEOUT} s deadline"


def _through_client(raw: RawServer, fault: Fault, size: int) -> None:
    exchange = serve(raw, fault, urlset(raw.origin, size), "application/xml")
    with HttpClient(options()) as client:
        result = client.get(raw.url("/sitemap.xml"))
        if isinstance(result, FetchFailure):
            assert result.code in FAILURE_CODES, result
            assert not exchange.whole, f"a well-behaved exchange failed: {result}"
            event(f"failure: {result.code}")
            return
        data = b"".join(result.body)  # no exception may escape the iteration
        body = result.body
    event(f"body problem: {body.problem and body.problem[0]}")
    assert body.problem is None or body.problem[0] in BODY_CODES, body.problem
    assert body.bytes_read == len(data) <= CAP
    if exchange.prefix and result.status == 200:
        assert is_prefix(data, exchange), "bytes that are not the body's were handed out"
    if exchange.whole:
        assert result.status == 200
        if len(exchange.body) <= CAP:
            assert (data, body.problem, body.complete) == (exchange.body, None, True)
        else:
            assert data == exchange.body[:CAP] and body.problem[0] == "too-large"


def _through_walker(raw: RawServer, fault: Fault, size: int) -> None:
    document = urlset(raw.origin, size)
    exchange = serve(raw, fault, document, "application/xml")
    walk = Walk(raw.url("/sitemap.xml"), WalkOptions(http=options()))
    locs = [entry.loc for entry in walk]
    for problem in walk.problems:
        assert problem.code in PROBLEM_CODES, problem
    event(f"walk problems: {sorted({p.code for p in walk.problems})}")
    assert len(walk.files) == 1 and walk.files[0].bytes_read <= CAP
    want = [f"{raw.origin}/page/{i}" for i in range(size)]
    if exchange.prefix:
        assert locs == want[: len(locs)], "entries that are not the file's were emitted"
    if exchange.whole and len(document) <= CAP:
        assert locs == want and walk.problems == []
    if _cut_cleanly(fault, exchange):  # every byte sent before the FIN arrived
        sent = _sent_body(fault, document)[:CAP]  # the cap cuts too
        assert len(locs) >= sent.count(b"</url>"), "entries completed before the cut were lost"


def _through_sampler_page(raw: RawServer, fault: Fault, size: int) -> None:
    html = page_html(size * 20)
    exchange = serve(raw, fault, html, "text/html; charset=utf-8")
    with HttpClient(options()) as client:
        page = download_page(client, raw.url("/page"), max_bytes=CAP)
    assert page.error is None or page.error in PAGE_ERRORS, page.error
    assert len(page.body) <= CAP
    evidence = evidence_of(page)
    assert isinstance(evidence, PageEvidence)
    assert evidence.error is None or evidence.error in PAGE_ERRORS
    event(f"page error: {page.error}")
    if exchange.prefix and page.ok:
        assert exchange.body.startswith(page.body) or exchange.endless
    if exchange.whole and len(html) <= CAP:
        assert page.ok and page.body == html and evidence.date_modified is not None


def _through_sampler_robots(raw: RawServer, fault: Fault, size: int) -> None:
    exchange = serve(raw, fault, ROBOTS, "text/plain")
    with HttpClient(options()) as client:
        policy = fetch_robots(client, raw.origin)
    assert policy.rule in ("parsed", "allow-all", "disallow-all")
    assert policy.allows(raw.url("/public")) in (True, False)
    event(f"robots: {policy.rule}")
    if exchange.whole:
        assert policy.rule == "parsed" and not policy.allows(raw.url("/private/x"))


def serve(raw: RawServer, fault: Fault, body: bytes, content_type: str) -> Exchange:
    exchange = script_for(fault, body, content_type)
    raw.script = lambda _request: exchange.steps
    event("whole" if exchange.whole else "prefix" if exchange.prefix else "anything")
    return exchange


def _cut_cleanly(fault: Fault, exchange: Exchange) -> bool:
    return (
        exchange.prefix
        and fault.encoding == "identity"
        and fault.ending == "close"
        and fault.delivery in ("all", "pieces", "drip-fast")
        and fault.framing in ("length", "close", "long-length")
    )


def _sent_body(fault: Fault, document: bytes) -> bytes:
    if fault.cut is None:
        return document
    return document[: int(len(document) * fault.cut)]


# -- redirects ---------------------------------------------------------------------------------

LOCATIONS = {
    "loop-to-self": lambda n: "/sitemap.xml",
    "endless-new": lambda n: f"/hop?{n + 1}",
    "relative-endless": lambda n: f"hop{n + 1}/x.xml",
    "off-host": lambda n: "http://127.0.0.2:9/sitemap.xml",
    "other-scheme": lambda n: "ftp://127.0.0.1/sitemap.xml",
    "empty": lambda n: "",
    "huge": lambda n: "/" + "a" * 60_000,
    "javascript": lambda n: "javascript:alert(1)",
}


@fuzz(25)
@given(
    st.sampled_from(sorted(LOCATIONS)),
    st.sampled_from([301, 302, 303, 307, 308]),
    st.sampled_from(["client", "walker", "page"]),
)
def test_redirects_end_in_a_named_outcome_within_the_deadline(raw, kind, status, entry):
    hops: list[bytes] = []

    def script(request: bytes) -> list:
        hops.append(request)
        location = LOCATIONS[kind](len(hops)).encode()
        head = b"HTTP/1.1 %d Moved\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % (
            status,
            location,
        )
        return [Send(head), Close()]

    raw.script = script
    started = time.monotonic()
    with HttpClient(options()) as client:
        if entry == "client":
            result = client.get(raw.url("/sitemap.xml"))
            assert isinstance(result, FetchFailure) and result.code in FAILURE_CODES, result
            if isinstance(result, Response):
                result.close()
        elif entry == "walker":
            walk = Walk(raw.url("/sitemap.xml"), WalkOptions(http=options()), client=client)
            assert list(walk) == []
            assert {p.code for p in walk.problems} <= PROBLEM_CODES
            assert walk.problems
        else:
            page = download_page(client, raw.url("/sitemap.xml"))
            assert page.error in PAGE_ERRORS
    assert len(hops) <= options().max_redirects + 1
    assert time.monotonic() - started < TIMEOUT + MARGIN


#: Location values that URL parsing refuses with ValueError (an unclosed IPv6 bracket).
UNPARSABLE_LOCATIONS = ["http://[::1", "//[bad", "http://[127.0.0.1]x/"]


@fuzz(3, shrink=False)
@given(st.sampled_from(UNPARSABLE_LOCATIONS), st.sampled_from(["client", "walker", "page"]))
def test_an_unparsable_location_is_a_named_failure(raw, location, entry):
    head = b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % location.encode()
    raw.script = lambda _request: [Send(head), Close()]
    with HttpClient(options()) as client:
        if entry == "client":
            result = client.get(raw.url("/sitemap.xml"))
            assert isinstance(result, FetchFailure) and result.code in FAILURE_CODES
        elif entry == "walker":
            walk = Walk(raw.url("/sitemap.xml"), WalkOptions(http=options()), client=client)
            list(walk)
            assert walk.problems and {p.code for p in walk.problems} <= PROBLEM_CODES
        else:
            assert download_page(client, raw.url("/page")).error in PAGE_ERRORS


# -- compression bombs on every encoding -------------------------------------------------------


def bomb(encoding: str, head: bytes, inflated: int) -> tuple[bytes, str | None]:
    """``head`` and then spaces to about ``inflated`` bytes, compressed as ``encoding`` says."""
    if encoding == "br":
        return brotli.compress(head + b" " * inflated, quality=1), "br"
    if encoding == "zstd":
        return zstandard.ZstdCompressor(level=1).compress(head + b" " * inflated), "zstd"
    wbits = {"deflate": zlib.MAX_WBITS, "deflate-raw": -zlib.MAX_WBITS}.get(encoding, 31)
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = b" " * MiB
    parts = [packer.compress(head), packer.flush(zlib.Z_FULL_FLUSH)]
    segment = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    data = b"".join(parts + [segment] * (inflated // MiB))  # no trailer: the cap comes first
    if encoding == "gzip-in-gzip":
        outer = zlib.compressobj(9, zlib.DEFLATED, 31)
        return outer.compress(data) + outer.flush(), "gzip"
    header = {"deflate-raw": "deflate", "gzip-magic": None}.get(encoding, encoding)
    return data, header


@fuzz(14)
@given(
    st.sampled_from(
        ["gzip", "x-gzip", "deflate", "deflate-raw", "gzip-magic", "gzip-in-gzip", "br", "zstd"]
    ),
    st.sampled_from(["client", "walker", "page"]),
    st.sampled_from(["length", "close", "chunked"]),
)
def test_a_compression_bomb_stops_at_the_cap_in_bounded_memory(raw, encoding, entry, framing):
    cap = MiB
    head = urlset(raw.origin, 3).split(b"</urlset>")[0] if entry != "page" else b"<html><body>"
    wire, header = bomb(encoding, head, 32 * cap)
    headers = b"Content-Type: text/html\r\n" if entry == "page" else b""
    if header:
        headers += b"Content-Encoding: %s\r\n" % header.encode()
    raw.script = lambda _request: [
        Send(_head_with(framing, wire, headers)),
        Send(_framed(framing, wire)),
        Close(),
    ]
    tracemalloc.start()
    try:
        outcome = _read_bomb(raw, entry, cap)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome == "too-large", outcome
    assert peak < 6 * cap + 8 * MiB, f"peak {peak:,} bytes for a {cap:,}-byte cap"


def _head_with(framing: str, wire: bytes, headers: bytes) -> bytes:
    length = b"Content-Length: %d\r\n" % len(wire) if framing == "length" else b""
    chunked = b"Transfer-Encoding: chunked\r\n" if framing == "chunked" else b""
    return b"HTTP/1.1 200 OK\r\n" + headers + length + chunked + b"\r\n"


def _framed(framing: str, wire: bytes) -> bytes:
    if framing != "chunked":
        return wire
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(wire), wire)


def _read_bomb(raw: RawServer, entry: str, cap: int) -> str | None:
    with HttpClient(options(max_bytes=cap, timeout=10)) as client:
        if entry == "client":
            result = client.get(raw.url("/bomb.xml"))
            assert isinstance(result, Response)
            for _chunk in result.body:  # streamed, not kept
                pass
            assert result.body.bytes_read == cap
            return result.body.problem and result.body.problem[0]
        if entry == "walker":
            walk = Walk(
                raw.url("/bomb.xml"), WalkOptions(http=options(max_bytes=cap)), client=client
            )
            assert len(list(walk)) == 3
            return next((p.code for p in walk.problems if p.code == "too-large"), None)
        page = download_page(client, raw.url("/bomb.html"), max_bytes=cap)
        assert page.ok and len(page.body) == cap
        return "too-large" if page.truncated else None


# -- defects fixed in issue 10 ----------------------------------------------------------------


@fuzz(4, shrink=False)
@given(st.sampled_from([b" ", b"\n", b"\r\n  "]), st.booleans())
def test_a_sitemap_dripping_whitespace_past_the_deadline_is_a_timeout(raw, filler, length):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
    head += b"Content-Length: 100000\r\n\r\n" if length else b"\r\n"
    raw.script = lambda _request: [Send(head), Send(filler * 200, pieces=200, gap=0.02), Hang()]
    walk = Walk(raw.url("/sitemap.xml"), WalkOptions(http=options(timeout=0.5)))
    assert list(walk) == []
    assert [p.code for p in walk.problems] == ["timeout"]


@fuzz(4, shrink=False)
@given(st.integers(1, 40))
def test_a_body_cut_by_the_deadline_is_never_taken_as_complete(raw, count):
    """A close-delimited body still arriving, a piece every 0.1 s, when the deadline ends it.

    (Pieces keep coming so that no per-read socket timeout fires first: the deadline's
    watchdog is what ends the read, which is the case that went unnoticed.)
    """
    body = urlset(raw.origin, count)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n\r\n"  # no length: ends at close
    raw.script = lambda _request: [Send(head), Send(body, pieces=len(body), gap=0.1), Close()]
    with HttpClient(options(timeout=0.5)) as client:
        result = client.get(raw.url("/sitemap.xml"))
        assert isinstance(result, Response)
        data = b"".join(result.body)
    assert len(data) < len(body)  # the deadline did cut it
    assert result.body.problem is not None and result.body.problem[0] == "timeout"
    assert not result.body.complete
