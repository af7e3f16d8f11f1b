"""The HTTP door (auditor/http.py) against real loopback servers: headers, retries, decoding,
caps and deadlines. Every response is scripted by a route; nothing leaves 127.0.0.1."""

from __future__ import annotations

import email.utils
import gzip
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from auditor import __version__
from auditor.http import FetchFailure, HttpClient, HttpOptions, Response
from tests.loopback import LoopbackServer, send

XML = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<url><loc>http://127.0.0.1/a</loc></url></urlset>\n"
)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    # One server for the whole module keeps its many small cases cheap.
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def server(shared_server: LoopbackServer) -> LoopbackServer:
    """The module's loopback server with no routes and an empty log."""
    shared_server.routes.clear()
    shared_server.log.clear()
    return shared_server


def get_recording_waits(url: str, **options: object) -> tuple[Response, list[float]]:
    """GET with retries whose waits are recorded instead of slept; the body is not read."""
    waits: list[float] = []
    with HttpClient(HttpOptions(**options)) as client:  # type: ignore[arg-type]
        client._sleep = waits.append
        result = client.get(url)
        assert isinstance(result, Response)
        result.close()
    return result, waits


def fetch(url: str, **options: object) -> tuple[Response | FetchFailure, bytes | None]:
    """GET with a fresh client; the body read whole (None for a failure)."""
    with HttpClient(HttpOptions(**options)) as client:
        result = client.get(url)
        data = b"".join(result.body) if isinstance(result, Response) else None
        return result, data


def start_raw(handler, status: int = 200, headers: dict[str, str] | None = None) -> None:
    """Status line and headers only; the route writes the body itself."""
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.close_connection = True


def drip(handler, data: bytes, gap: float, stop: threading.Event) -> None:
    """Write ``data`` one byte at a time, ``gap`` seconds apart, until done or stopped."""
    for i in range(len(data)):
        if stop.wait(gap):
            return
        handler.wfile.write(data[i : i + 1])


def sequence(*responses):
    """A route answering each request with the next (status, headers, body), the last repeating."""
    calls = []

    def route(handler):
        status, headers, body = responses[min(len(calls), len(responses) - 1)]
        calls.append(status)
        send(handler, status, body, "application/xml", headers)

    return route


# -- who we are -------------------------------------------------------------------------------


def test_user_agent_names_the_tool_its_version_and_the_contact(server):
    server.routes.update({"/s.xml": lambda h: send(h, 200, XML)})
    fetch(server.url("/s.xml"), contact="mailto:crawl-ops@example.org")
    fetch(server.url("/s.xml"))

    custom, default = (r.headers["User-Agent"] for r in server.log)
    assert custom.startswith(f"auditor/{__version__}")
    assert "mailto:crawl-ops@example.org" in custom
    assert default == f"auditor/{__version__}"  # no contact of someone else's: none
    assert HttpOptions().contact == ""


# -- retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 503, 500])
def test_retryable_status_is_retried_with_backoff_then_succeeds(server, status):
    route = sequence((status, {}, b"busy"), (status, {}, b"busy"), (200, {}, XML))
    server.routes.update({"/s.xml": route})
    waits: list[float] = []
    with HttpClient(HttpOptions(retries=2, backoff=0.25)) as client:
        client._sleep = waits.append
        result = client.get(server.url("/s.xml"))
        assert isinstance(result, Response)
        assert result.status == 200
        assert b"".join(result.body) == XML

    assert waits == [0.25, 0.5]  # backoff doubles
    assert server.paths() == ["/s.xml"] * 3


def test_retry_after_in_seconds_is_honoured(server):
    server.routes.update({"/s.xml": sequence((503, {"Retry-After": "7"}, b""), (200, {}, XML))})
    result, waits = get_recording_waits(server.url("/s.xml"), retries=2, backoff=0.1)
    assert result.status == 200
    assert waits == [7.0]


def test_retry_after_as_http_date_is_honoured(server):
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.routes.update({"/s.xml": sequence((429, {"Retry-After": when}, b""), (200, {}, XML))})
    result, waits = get_recording_waits(server.url("/s.xml"), retries=2, backoff=0.1)
    assert result.status == 200
    assert len(waits) == 1
    assert 27.0 <= waits[0] <= 31.0  # the date has one-second resolution


def test_retries_are_bounded_then_the_status_is_reported(server):
    server.routes.update({"/s.xml": sequence((503, {"Retry-After": "1"}, b"down"))})
    result, waits = get_recording_waits(server.url("/s.xml"), retries=3, backoff=0.5)
    assert result.status == 503
    assert waits == [1.0, 1.0, 2.0]  # the larger of Retry-After and the backoff
    assert len(server.log) == 4  # the first attempt and three retries


def test_not_found_is_not_retried(server):
    server.routes.update({"/s.xml": sequence((404, {"Retry-After": "1"}, b"nope"))})
    result, waits = get_recording_waits(server.url("/s.xml"), retries=3, backoff=0.5)
    assert result.status == 404
    assert waits == []
    assert len(server.log) == 1


def test_retry_after_above_the_limit_is_not_waited_for(server):
    server.routes.update({"/s.xml": sequence((503, {"Retry-After": "3600"}, b""), (200, {}, XML))})
    result, waits = get_recording_waits(server.url("/s.xml"), retries=3, max_retry_wait=60)
    assert result.status == 503
    assert waits == []
    assert len(server.log) == 1


# -- decoding ---------------------------------------------------------------------------------


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", lambda d: gzip.compress(d, mtime=0)),
        ("x-gzip", lambda d: gzip.compress(d, mtime=0)),
        ("deflate", zlib.compress),  # zlib-wrapped, as RFC 9110 says
        ("deflate", _raw_deflate),  # raw, as some servers send it
    ],
)
def test_content_encoding_is_decoded(server, encoding, encode):
    route = lambda h: send(h, 200, encode(XML), "application/xml", {"Content-Encoding": encoding})  # noqa: E731
    server.routes.update({"/s.xml": route})
    assert fetch(server.url("/s.xml"))[1] == XML


def test_gzip_is_judged_by_magic_bytes_not_by_name(server):
    server.routes.update(
        {
            "/gzipped.xml": lambda h: send(h, 200, gzip.compress(XML), "application/xml"),
            "/plain.xml.gz": lambda h: send(h, 200, XML, "application/gzip"),
        }
    )
    with HttpClient(HttpOptions()) as client:
        gzipped = client.get(server.url("/gzipped.xml"))
        plain = client.get(server.url("/plain.xml.gz"))
        assert isinstance(gzipped, Response) and isinstance(plain, Response)
        assert b"".join(gzipped.body) == XML
        assert gzipped.body.gzipped and gzipped.body.problem is None
        assert b"".join(plain.body) == XML
        assert not plain.body.gzipped and plain.body.problem is None


def test_a_gzip_file_sent_with_content_encoding_gzip_is_decoded_twice(server):
    body = gzip.compress(gzip.compress(XML))
    route = lambda h: send(h, 200, body, "application/gzip", {"Content-Encoding": "gzip"})  # noqa: E731
    server.routes.update({"/s.xml.gz": route})
    assert fetch(server.url("/s.xml.gz"))[1] == XML


def test_broken_gzip_stream_is_a_problem_not_an_exception(server):
    broken = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"this is not deflate data" * 10
    truncated = gzip.compress(XML * 50)[:-40]
    server.routes.update(
        {
            "/broken.xml.gz": lambda h: send(h, 200, broken),
            "/truncated.xml.gz": lambda h: send(h, 200, truncated),
        }
    )
    with HttpClient(HttpOptions()) as client:
        for path in ("/broken.xml.gz", "/truncated.xml.gz"):
            result = client.get(server.url(path))
            assert isinstance(result, Response)
            b"".join(result.body)
            assert result.body.problem is not None
            assert result.body.problem[0] == "not-well-formed", path
            assert not result.body.complete


# -- connection failures ----------------------------------------------------------------------


def test_connection_refused_is_an_http_error_failure():
    with socket.socket() as probe:  # a port that was free a moment ago and is closed now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    result, _ = fetch(f"http://127.0.0.1:{port}/sitemap.xml", timeout=2)
    assert isinstance(result, FetchFailure)
    assert result.code == "http-error"
    assert "refused" in result.detail.lower()
    assert time.monotonic() - started < 2


# -- the byte cap -----------------------------------------------------------------------------


def test_the_body_cap_stops_reading_early(server):
    offered = 256 * 1024 * 1024
    block = b" " * 65_536
    sent = [0]
    done = threading.Event()

    def endless_spaces(handler):
        start_raw(handler, 200, {"Content-Length": str(offered)})
        try:
            while sent[0] < offered:
                handler.wfile.write(block)
                sent[0] += len(block)
        finally:
            done.set()

    server.routes.update({"/big.xml": endless_spaces})
    cap = 100_000
    with HttpClient(HttpOptions(max_bytes=cap, timeout=10)) as client:
        result = client.get(server.url("/big.xml"))
        assert isinstance(result, Response)
        data = b"".join(result.body)
        assert len(data) == cap
        assert result.body.bytes_read == cap
        assert result.body.problem is not None and result.body.problem[0] == "too-large"
        assert done.wait(10), "the server kept sending after the client stopped reading"
    # Socket buffers hold a few MB at most: the client hung up long before the end.
    assert sent[0] < offered // 8


def test_the_cap_applies_after_decompression(server):
    bomb = gzip.compress(b" " * (20 * 1024 * 1024), compresslevel=9)
    server.routes.update({"/bomb.xml": lambda h: send(h, 200, bomb)})
    with HttpClient(HttpOptions(max_bytes=1_000_000)) as client:
        result = client.get(server.url("/bomb.xml"))
        assert isinstance(result, Response)
        data = b"".join(result.body)
    assert len(data) == 1_000_000
    assert result.body.problem is not None and result.body.problem[0] == "too-large"


def test_the_cap_applies_to_content_encoding_too(server):
    bomb = gzip.compress(b" " * (20 * 1024 * 1024), compresslevel=9)
    route = lambda h: send(h, 200, bomb, "application/xml", {"Content-Encoding": "gzip"})  # noqa: E731
    server.routes.update({"/bomb.xml": route})
    with HttpClient(HttpOptions(max_bytes=1_000_000)) as client:
        result = client.get(server.url("/bomb.xml"))
        assert isinstance(result, Response)
        data = b"".join(result.body)
    assert len(data) == 1_000_000
    assert result.body.problem is not None and result.body.problem[0] == "too-large"


@pytest.mark.parametrize(
    ("content_encoding", "pack"),
    [
        (None, lambda d: gzip.compress(d, compresslevel=9)),  # gzip judged by its magic bytes
        ("gzip", lambda d: gzip.compress(d, compresslevel=9)),
        ("deflate", lambda d: zlib.compress(d, 9)),
    ],
)
def test_a_decompressed_body_is_streamed_in_small_chunks(server, content_encoding, pack):
    # A plain body arrives in 64 KiB reads; an inflated one must not come out as one piece
    # as large as the cap (50 MB by default), or a small gzip file costs its whole inflated
    # size in memory, twice (the chunk and its slice at the cap).
    data = b" " * (20 * 1024 * 1024)
    packed = pack(data)
    headers = {"Content-Encoding": content_encoding} if content_encoding else {}
    server.routes["/s.xml"] = lambda h: send(h, 200, packed, "application/xml", headers)
    with HttpClient(HttpOptions()) as client:
        result = client.get(server.url("/s.xml"))
        assert isinstance(result, Response)
        sizes = [len(chunk) for chunk in result.body]
    assert sum(sizes) == len(data)
    assert result.body.problem is None
    assert max(sizes) <= 1024 * 1024, f"largest chunk {max(sizes):,} bytes"


# -- the deadline ---------------------------------------------------------------------------


def test_the_deadline_is_total_not_per_read_for_the_body(server, hold):
    # Each byte arrives well inside any per-read timeout; only a total deadline stops this.
    def slow_body(handler):
        start_raw(handler, 200, {"Content-Type": "application/xml", "Content-Length": "100000"})
        handler.wfile.write(XML[:40])
        drip(handler, b" " * 99_000, 0.05, hold)

    server.routes.update({"/slow.xml": slow_body})
    started = time.monotonic()
    with HttpClient(HttpOptions(timeout=0.6)) as client:
        result = client.get(server.url("/slow.xml"))
        assert isinstance(result, Response)
        b"".join(result.body)
        elapsed = time.monotonic() - started
        assert result.body.problem is not None
        assert result.body.problem[0] == "timeout"
    assert elapsed < 4


def test_the_deadline_covers_headers_that_drip(server, hold):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nX-Pad: " + b"a" * 200

    def slow_headers(handler):
        handler.close_connection = True
        drip(handler, head, 0.05, hold)

    server.routes.update({"/slow.xml": slow_headers})
    started = time.monotonic()
    result, _ = fetch(server.url("/slow.xml"), timeout=0.6)
    assert isinstance(result, FetchFailure)
    assert result.code == "timeout"
    assert time.monotonic() - started < 4


def test_a_server_that_never_answers_times_out(server, hold):
    def silent(handler):
        handler.close_connection = True
        hold.wait(15)

    server.routes.update({"/silent.xml": silent})
    started = time.monotonic()
    result, _ = fetch(server.url("/silent.xml"), timeout=0.6)
    assert isinstance(result, FetchFailure)
    assert result.code == "timeout"
    assert time.monotonic() - started < 4


def test_the_deadline_spans_a_chain_of_slow_redirects(server):
    def hop(n):
        def route(handler):
            time.sleep(0.25)
            send(handler, 302, b"", "text/plain", {"Location": f"/hop{n + 1}"})

        return route

    server.routes.update(
        {f"/hop{n}": hop(n) for n in range(5)} | {"/hop5": lambda h: send(h, 200, XML)}
    )
    started = time.monotonic()
    result, _ = fetch(server.url("/hop0"), timeout=0.6)
    assert isinstance(result, FetchFailure)
    assert result.code == "timeout"
    assert time.monotonic() - started < 4
    assert "/hop5" not in server.paths()


# -- redirects at the door ------------------------------------------------------------------


def _redirect_to(location: str):
    return lambda h: send(h, 301, b"", "text/plain", {"Location": location})


def _chain(length: int) -> dict:
    """/r0 -> /r1 -> ... -> /r<length>, which answers 200: ``length`` redirects."""
    routes = {f"/r{n}": _redirect_to(f"/r{n + 1}") for n in range(length)}
    routes[f"/r{length}"] = lambda h: send(h, 200, XML)
    return routes


def test_five_redirects_are_followed(server):
    server.routes.update(_chain(5))
    result, data = fetch(server.url("/r0"))
    assert isinstance(result, Response), result
    assert result.status == 200
    assert result.final_url == server.url("/r5")
    assert result.url == server.url("/r0")
    assert data == XML


def test_six_redirects_are_too_many(server):
    server.routes.update(_chain(6))
    result, _ = fetch(server.url("/r0"))
    assert isinstance(result, FetchFailure)
    assert result.code == "too-many-redirects"
    assert "/r6" not in server.paths()


@pytest.mark.parametrize(
    "location", ["file:///etc/passwd", "ftp://127.0.0.1/x.xml", "http://localhost:{port}/x.xml"]
)
def test_redirects_off_host_or_off_http_are_not_followed(server, location):
    location = location.format(port=server.port)
    server.routes["/s.xml"] = lambda h: send(h, 302, b"", "text/plain", {"Location": location})
    server.routes["/x.xml"] = lambda h: send(h, 200, XML)
    result, _ = fetch(server.url("/s.xml"))
    assert isinstance(result, FetchFailure)
    assert result.code == "redirect"
    assert server.paths() == ["/s.xml"]


# -- nothing outlives a request ---------------------------------------------------------------


def _live_watchdogs() -> list[threading.Thread]:
    return [
        t
        for t in threading.enumerate()
        if isinstance(t, threading.Timer)
        and type(getattr(t.function, "__self__", None)).__name__ == "_Deadline"
    ]


def _new_watchdogs(before: set[threading.Thread], seconds: float = 2.0) -> list[threading.Thread]:
    """Watchdogs started since ``before`` that are still running after a short grace."""
    end = time.monotonic() + seconds
    while True:
        alive = [t for t in _live_watchdogs() if t not in before]
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.02)


@pytest.mark.parametrize("path", ["/ok", "/missing", "/r0", "/loop", "/away"])
def test_no_deadline_watchdog_outlives_its_request(server, path):
    server.routes.update(_chain(6))
    server.routes["/ok"] = lambda h: send(h, 200, XML)
    server.routes["/missing"] = lambda h: send(h, 404, b"")
    server.routes["/loop"] = _redirect_to("/loop")
    server.routes["/away"] = _redirect_to(f"http://localhost:{server.port}/ok")
    before = set(_live_watchdogs())
    with HttpClient(HttpOptions(timeout=20)) as client:
        result = client.get(server.url(path))
        if isinstance(result, Response):
            b"".join(result.body)
    # A watchdog left running holds a thread for the whole timeout, per request.
    assert _new_watchdogs(before) == []
