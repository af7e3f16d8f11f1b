"""The replayed site, read directly by the baselines and served on loopback for auditor.

:class:`ReplaySite` has what the plan bench's baselines read of a
:class:`~tests.benchmarks.planbench.world.PlanSite` (``pages`` with ``events``, ``rate``
and ``version_at``; ``lastmod_at``; ``at``), so :mod:`..planbench.policies` and
:mod:`..planbench.measure` run on it unchanged. :class:`ReplayServer` serves it at the
instant of a :class:`~auditor.demo.clock.SimulatedClock`: ``/robots.txt`` (everything
allowed, the sitemap declared), ``/sitemap.xml`` (one entry per page, lastmod the CMS's
``updated`` of the snapshot in force, the snapshot's ETag answered with 304) and every
page under its real path and query, its saved main region wrapped in a fixed page (the
same header, nav and footer every day: the data holds no more). Every page served is
logged with its instant and main-text version (:attr:`ReplayServer.served`).

Touches: the network (loopback) and the disk (reads the data folder).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..planbench.server import PlanSiteServer, tagged_xml
from .snapshots import ReplayPage, Window, snapshot_at

__all__ = ["ReplayServer", "ReplaySite"]


@dataclass
class ReplaySite:
    """The window's pages as one site on ``host``."""

    window: Window
    name: str = "library.caltech.edu"
    behaviour: str = "cms-updated"
    seed: int = 1
    host: str = "127.0.0.2"
    by_path: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.by_path = {p.path: i for i, p in enumerate(self.pages)}

    @property
    def pages(self) -> list[ReplayPage]:
        """The pages, in sitemap order."""
        return self.window.pages

    @property
    def t0(self) -> datetime:
        """Midnight UTC of day 0."""
        return self.window.t0

    def at(self, s: int) -> datetime:
        """Instant ``s`` as an aware datetime."""
        return self.t0 + timedelta(seconds=s)

    def instant(self, moment: datetime) -> int:
        """An aware datetime as a whole instant (seconds since t0, floored)."""
        return int((moment - self.t0).total_seconds() // 1)

    def version_at(self, page: int, s: int) -> int:
        """Page ``page``'s main-text version at ``s``."""
        return self.pages[page].version_at(s)

    def lastmod_at(self, page: int, s: int) -> int | None:
        """The instant page ``page``'s lastmod names in the sitemap served at ``s``."""
        return self.pages[page].lastmod_at(s)

    def robots_txt(self, origin: str) -> str:
        """Everything allowed, the sitemap declared."""
        return f"User-agent: *\nAllow: /\n\nSitemap: {origin}/sitemap.xml\n"

    def sitemap_xml(self, origin: str, s: int) -> str:
        """The sitemap at ``s``: every page, with its lastmod of the snapshot in force."""
        lines = []
        for i, page in enumerate(self.pages):
            value = self.lastmod_at(i, s)
            tag = (
                f"<lastmod>{self.at(value).strftime('%Y-%m-%dT%H:%M:%S+00:00')}</lastmod>"
                if value is not None
                else ""
            )
            loc = html.escape(origin + page.path, quote=False)
            lines.append(f"  <url><loc>{loc}</loc>{tag}</url>\n")
        ns = "http://www.sitemaps.org/schemas/sitemap/0.9"
        return (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{ns}">\n'
            + "".join(lines)
            + "</urlset>\n"
        )

    def page_html(self, path: str, s: int) -> tuple[str, int] | None:
        """The page at ``s`` (its saved main region in a fixed frame) and its version."""
        index = self.by_path.get(path)
        if index is None:
            return None
        page = self.pages[index]
        title = html.escape(page.title)
        text = (
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{title} - Caltech Library</title></head><body>"
            "<header><nav><a href='/'>Caltech Library</a> <a href='/research'>Research</a> "
            "<a href='/services'>Services</a> <a href='/about'>About</a></nav></header>"
            f"<main id='s-lg-guide-main'>{page.body_at(s)}</main>"
            "<footer><p>Caltech Library, 1200 E California Blvd, Pasadena CA</p></footer>"
            "</body></html>"
        )
        return text, page.version_at(s)

    def snapshot(self, s: int) -> int:
        """The index of the snapshot in force at ``s``."""
        return snapshot_at(self.window.instants, s)


class ReplayServer(PlanSiteServer):
    """A :class:`ReplaySite` over HTTP at ``site.host``, on ``clock``: the plan bench's
    server, but the page's path keeps its query (``c.php?g=…&p=…`` names the page)."""

    site: ReplaySite  # type: ignore[assignment]

    def respond(
        self, path: str, etag: str | None = None, agent: str = ""
    ) -> tuple[int, str, bytes, dict[str, str]]:
        """(status, content type, body, headers) for a GET of ``path`` (with its query)."""
        s = self.site.instant(self.clock())
        if path == "/robots.txt":
            return 200, "text/plain", self.site.robots_txt(self.origin).encode(), {}
        if path == "/sitemap.xml":
            return tagged_xml(self.site.sitemap_xml(self.origin, s), etag)
        return self.page(path, s, agent)
