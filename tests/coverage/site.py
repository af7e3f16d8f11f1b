"""A loopback site built to have each coverage finding, and its crawl logs.

Two sub-sitemaps under an index: ``/a.xml`` lists pages that are fine, one that 301s,
one 404, one 500, one noindex by meta, one by ``X-Robots-Tag``, one canonical to
another page, one canonical to itself written differently, one shared with ``/b.xml``,
and two the crawl never fetches; ``/orphan`` is served and crawled but listed nowhere.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import requests
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.loopback import LoopbackServer, send

FINE = ["/fine-1", "/fine-2", "/fine-3"]
NEVER = ["/never-1", "/never-2"]
A_PAGES = [
    *FINE,
    "/moved",
    "/gone",
    "/broken",
    "/meta-noindex",
    "/header-noindex",
    "/canonical-elsewhere",
    "/self-canonical",
    "/shared",
    *NEVER,
]
B_PAGES = ["/shared", "/b-only"]
#: What the crawler fetches (and the orphan).
CRAWLED = [p for p in A_PAGES if p not in NEVER] + ["/b-only", "/orphan"]


def _html(head: str = "", body: str = "<p>Some words of an article.</p>") -> bytes:
    page = f"<!doctype html><html><head><title>t</title>{head}</head><body>{body}</body></html>"
    return page.encode()


def _page(
    status: int, head: str = "", headers: dict[str, str] | None = None
) -> Callable[..., None]:
    def route(handler: BaseHTTPRequestHandler) -> None:
        send(handler, status, _html(head), "text/html; charset=utf-8", headers)

    return route


def _urlset(origin: str, paths: list[str]) -> bytes:
    urls = "".join(f"<url><loc>{origin}{p}</loc></url>" for p in paths)
    return (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{urls}</urlset>"
    ).encode()


class CoverageSite(LoopbackServer):
    """The site, served on 127.0.0.1 (use as a context manager)."""

    def __init__(self) -> None:
        super().__init__(routes={})
        origin = self.origin
        xml = "application/xml"
        index = (
            '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{origin}/a.xml</loc></sitemap>"
            f"<sitemap><loc>{origin}/b.xml</loc></sitemap></sitemapindex>"
        ).encode()
        written = origin.replace("http://", "HTTP://")  # itself, written otherwise
        self.routes.update(
            {
                "/sitemap.xml": lambda h: send(h, 200, index, xml),
                "/a.xml": lambda h: send(h, 200, _urlset(origin, A_PAGES), xml),
                "/b.xml": lambda h: send(h, 200, _urlset(origin, B_PAGES), xml),
                "/moved": lambda h: send(h, 301, b"", "text/html", {"Location": "/fine-1"}),
                "/gone": _page(404),
                "/broken": _page(500),
                "/meta-noindex": _page(200, '<meta name="robots" content="NOINDEX, follow">'),
                "/header-noindex": _page(200, headers={"X-Robots-Tag": "googlebot: noindex"}),
                "/canonical-elsewhere": _page(200, '<link rel="canonical" href="/fine-2">'),
                "/self-canonical": _page(
                    200, f'<link rel="canonical" href="{written}/self-canonical#top">'
                ),
                "/orphan": _page(200),
                **{p: _page(200) for p in [*FINE, "/shared", "/b-only", *NEVER]},
            }
        )


def warc(path: Path, origin: str, paths: list[str], at: datetime) -> None:
    """A WARC of the crawler's fetches of ``paths`` (redirects not followed), dated ``at``."""
    with path.open("wb") as out, requests.Session() as session:
        writer = WARCWriter(out, gzip=True)
        for p in paths:
            answer = session.get(origin + p, timeout=10, allow_redirects=False)
            headers = [(k, v) for k, v in answer.headers.items() if k.lower() != "content-length"]
            status = f"{answer.status_code} {answer.reason}"
            record = writer.create_warc_record(
                origin + p,
                "response",
                payload=io.BytesIO(answer.content),
                length=len(answer.content),
                http_headers=StatusAndHeaders(status, headers, protocol="HTTP/1.1"),
                warc_headers_dict={"WARC-Date": at.strftime("%Y-%m-%dT%H:%M:%SZ")},
            )
            writer.write_record(record)
