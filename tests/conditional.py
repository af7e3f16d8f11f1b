"""A loopback server that answers conditional requests, and a small site to serve with it.

:class:`ConditionalServer` serves a folder as :class:`~tests.loopback.LoopbackServer`
does, each file with an ``ETag`` (a hash of the bytes served) and a ``Last-Modified``
(the file's modification time), and answers ``If-None-Match`` / ``If-Modified-Since``
with 304 Not Modified when they still hold. ``mode`` makes it a server that sends
only Last-Modified, or one that sends validators but ignores them (always 200). Every
answer is logged with its status and the body bytes sent.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.loopback import LoopbackServer, send

SITEMAP_PATHS = ("/sitemap_index.xml", "/pages.xml", "/posts.xml.gz", "/news.xml")


@dataclass
class Answer:
    path: str
    status: int
    body_bytes: int
    if_none_match: str | None
    if_modified_since: str | None


class ConditionalServer(LoopbackServer):
    """``mode``: ``etag`` (ETag and Last-Modified, both honoured), ``last-modified``
    (Last-Modified only), ``ignore`` (both sent, never honoured)."""

    def __init__(self, root: Path | None = None, *, mode: str = "etag") -> None:
        self.mode = mode
        self.answers: list[Answer] = []
        super().__init__(root)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        body = self.render(path)
        asked = handler.headers.get("If-None-Match"), handler.headers.get("If-Modified-Since")
        if body is None:  # each answer is logged before it is sent: the log is never late
            self.answers.append(Answer(path, 404, 9, *asked))
            send(handler, 404, b"not found", "text/plain")
            return
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = int(self._source(path).stat().st_mtime)
        headers = {"Last-Modified": formatdate(modified, usegmt=True)}
        if self.mode != "last-modified":
            headers["ETag"] = etag
        if self.mode != "ignore" and _unchanged(handler, etag, modified, self.mode):
            self.answers.append(Answer(path, 304, 0, *asked))
            handler.send_response(304)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            return
        self.answers.append(Answer(path, 200, len(body), *asked))
        send(handler, 200, body, self.content_type(path), headers)

    def _source(self, path: str) -> Path:
        assert self.root is not None
        source = self.root / path.lstrip("/")
        return source if source.is_file() else source.with_suffix("")

    def sitemap_answers(self, since: int = 0) -> dict[str, list[Answer]]:
        """The answers to sitemap requests (robots.txt and pages left out), from ``since``."""
        found: dict[str, list[Answer]] = {}
        for answer in self.answers[since:]:
            if answer.path.endswith((".xml", ".gz")):
                found.setdefault(answer.path, []).append(answer)
        return found


def _unchanged(handler: BaseHTTPRequestHandler, etag: str, modified: int, mode: str) -> bool:
    """RFC 9110 13.2.2: If-None-Match decides when present, else If-Modified-Since."""
    tags = handler.headers.get("If-None-Match")
    if tags is not None and mode != "last-modified":
        return any(tag.strip() in (etag, "*") for tag in tags.split(","))
    since = handler.headers.get("If-Modified-Since")
    if since is None:
        return False
    try:
        return modified <= parsedate_to_datetime(since).timestamp()
    except (TypeError, ValueError):
        return False


ROBOTS = """User-agent: *
Disallow: /private/
Sitemap: {{origin}}/sitemap_index.xml
Sitemap: {{origin}}/news.xml
"""
INDEX = """<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>{{origin}}/pages.xml</loc><lastmod>2026-10-01</lastmod></sitemap>
  <sitemap><loc>{{origin}}/posts.xml.gz</loc><lastmod>2026-11-20T08:00:00+00:00</lastmod></sitemap>
  <sitemap><loc>{{origin}}/gone.xml</loc><lastmod>1/10/2026</lastmod></sitemap>
</sitemapindex>
"""
PAGES = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>{{origin}}/about.html</loc><lastmod>2026-09-30</lastmod></url>
  <url><loc>{{origin}}/contact.html</loc><lastmod>15/10/2026</lastmod></url>
  <url><loc>relative/page.html</loc></url>
  <url><loc>http://elsewhere.example/x.html</loc></url>
  <url><lastmod>2026-01-01</lastmod></url>
  <url><loc>{{origin}}/team.html</loc></url>
</urlset>
"""
NEWS = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>{{origin}}/posts/breaking.html</loc>
    <news:news><news:publication_date>2026-11-29T06:00:00.250+01:00</news:publication_date>
    </news:news><lastmod>2026-11-29T07:30:00+01:00</lastmod></url>
</urlset>
"""
ARTICLE = """<!doctype html><html><head><meta charset="utf-8"><title>{name}</title>
<script type="application/ld+json">{{"@context":"https://schema.org","@type":"Article",
"headline":"{name}","datePublished":"2026-01-01T00:00:00Z","dateModified":"{modified}"}}</script>
</head><body><main><article><h1>{name}</h1><p>The body of {name}, long enough to count as
content for the fingerprint of this page.</p></article></main></body></html>
"""


def post_entries(count: int, start: int = 0) -> str:
    """The urlset of posts ``start`` to ``start + count``."""
    rows = "".join(
        f"  <url><loc>{{{{origin}}}}/posts/{i}.html</loc>"
        f"<lastmod>2026-11-{1 + i % 28:02d}T08:00:00Z</lastmod></url>\n"
        for i in range(start, start + count)
    )
    head = '<?xml version="1.0" encoding="UTF-8"?>\n'
    return f'{head}<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n'


def make_site(root: Path, posts: int = 8) -> Path:
    """A site: robots.txt naming an index (pages, gzip'd posts, a child that 404s) and a
    news sitemap, and an article page for every post."""
    root.mkdir(parents=True, exist_ok=True)
    files = {
        "robots.txt": ROBOTS,
        "sitemap_index.xml": INDEX,
        "pages.xml": PAGES,
        "posts.xml": post_entries(posts),
        "news.xml": NEWS,
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "posts").mkdir(exist_ok=True)
    for i in range(posts):
        modified = f"2026-11-{1 + i % 28:02d}T08:00:00Z"
        page = ARTICLE.format(name=f"Post {i}", modified=modified)
        (root / "posts" / f"{i}.html").write_text(page, encoding="utf-8")
    return root


def touch_later(path: Path, seconds: int = 10) -> None:
    """Move a file's modification time ``seconds`` later (Last-Modified has 1 s steps)."""
    later = path.stat().st_mtime + seconds
    os.utime(path, (later, later))
