"""Content codings a server may send anyway: br and zstd decoded with gzip's cap (a
bomb stops there, in bounded memory), a plain br/zstd sitemap read, and a coding
auditor cannot read named (``unsupported-encoding``), its bytes never parsed."""

from __future__ import annotations

import time
import tracemalloc

import brotli
import pytest
import zstandard

from auditor.http import HttpClient, HttpOptions, Response
from auditor.http.codings import ACCEPT_ENCODING
from auditor.sampler.fetch import download_page
from auditor.walker import Walk, WalkOptions
from tests.loopback import send

MiB = 1024 * 1024
_PACK = {
    "br": lambda data: brotli.compress(data, quality=5),
    "zstd": lambda data: zstandard.ZstdCompressor(level=3).compress(data),
}


def _urlset(origin: str, count: int) -> bytes:
    urls = "".join(
        f"<url><loc>{origin}/p/{i}</loc><lastmod>2026-11-01</lastmod></url>" for i in range(count)
    )
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()


def test_every_request_asks_for_the_codings_auditor_decodes(serve):
    server = serve(routes={"/x": lambda h: send(h, 200, b"ok", "text/plain")})
    assert ACCEPT_ENCODING == "gzip, deflate, br, zstd"
    with HttpClient() as client:
        response = client.get(server.url("/x"))
        assert isinstance(response, Response)
        response.close()
    assert server.log[0].headers["Accept-Encoding"] == ACCEPT_ENCODING


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip, br", "br, zstd"])
def test_a_br_or_zstd_sitemap_is_read(serve, coding):
    server = serve(routes={})
    document = _urlset(server.origin, 200)
    wire = document
    for step in coding.split(", "):
        wire = _PACK[step](wire) if step in _PACK else __import__("gzip").compress(wire)
    server.routes["/sitemap.xml"] = lambda h: send(
        h, 200, wire, headers={"Content-Encoding": coding}
    )
    walk = Walk(server.url("/sitemap.xml"))
    assert len(list(walk)) == 200
    assert walk.problems == []


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_a_bomb_stops_at_the_cap_in_bounded_memory(serve, coding):
    """200 MiB of spaces behind a few KB; a 4 MiB cap: the body stops at the cap, and the
    memory held meanwhile is a few decoding steps, not the bomb."""
    cap = 4 * MiB
    wire = _PACK[coding](b"<urlset>" + b" " * (200 * MiB))
    server = serve(routes={})
    server.routes["/bomb.xml"] = lambda h: send(h, 200, wire, headers={"Content-Encoding": coding})
    tracemalloc.start()
    started = time.monotonic()
    try:
        with HttpClient(HttpOptions(max_bytes=cap)) as client:
            response = client.get(server.url("/bomb.xml"))
            assert isinstance(response, Response)
            for _chunk in response.body:
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.monotonic() - started
    assert response.body.problem is not None and response.body.problem[0] == "too-large"
    assert response.body.bytes_read == cap
    assert peak < cap + 2 * MiB, f"peak {peak:,} bytes"  # a few steps, never the bomb
    assert elapsed < 5, f"{elapsed:.2f} s"
    assert len(wire) < 200 * MiB // 1000  # it was a bomb


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_a_bomb_cuts_a_walk_as_a_gzip_one_does(serve, coding):
    server = serve(routes={})
    head = _urlset(server.origin, 3).split(b"</urlset>")[0]
    wire = _PACK[coding](head + b" " * (80 * MiB))
    server.routes["/bomb.xml"] = lambda h: send(h, 200, wire, headers={"Content-Encoding": coding})
    walk = Walk(server.url("/bomb.xml"), WalkOptions(http=HttpOptions(max_bytes=MiB)))
    assert len(list(walk)) == 3  # what came before the cap is kept
    assert [p.code for p in walk.problems] == ["too-large"]


def test_a_coding_auditor_cannot_read_is_named_never_parsed(serve):
    server = serve(routes={})
    document = _urlset(server.origin, 3)
    server.routes["/sitemap.xml"] = lambda h: send(
        h, 200, document, headers={"Content-Encoding": "compress"}
    )
    page = b"<html><body><p>hello</p></body></html>"
    server.routes["/page"] = lambda h: send(
        h, 200, page, "text/html", {"Content-Encoding": "snappy"}
    )
    walk = Walk(server.url("/sitemap.xml"))
    assert list(walk) == []  # the bytes are not read as a sitemap
    assert [p.code for p in walk.problems] == ["unsupported-encoding"]
    assert "compress" in walk.problems[0].detail
    with HttpClient() as client:
        fetched = download_page(client, server.url("/page"))
    assert fetched.error == "unsupported-encoding"


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_a_broken_or_cut_stream_is_not_well_formed(serve, coding):
    server = serve(routes={})
    wire = _PACK[coding](_urlset(server.origin, 500))[:-20]
    server.routes["/s.xml"] = lambda h: send(h, 200, wire, headers={"Content-Encoding": coding})
    walk = Walk(server.url("/s.xml"))
    list(walk)
    assert "not-well-formed" in {p.code for p in walk.problems}
