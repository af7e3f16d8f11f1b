"""Serving simulated sites on 127.0.0.1, one port (one origin) per site.

Touches: the network.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from auditor.demo.loopback import LoopbackHTTPServer, send
from auditor.demo.site import SimulatedSite

__all__ = ["SiteServer"]


class SiteServer(LoopbackHTTPServer):
    """One simulated site on its own loopback port, served from a thread.

    ``clock`` tells the time the site lives in (its generation-time lastmods, render-time
    dates and ``Date`` headers); the real clock by default. ``log`` holds every request
    (:class:`~auditor.demo.loopback.LoggedRequest`: when it arrived, when it was answered).
    """

    def __init__(
        self,
        site: SimulatedSite,
        clock: Callable[[], datetime] | None = None,
        *,
        host: str = "127.0.0.1",
    ) -> None:
        self.site = site
        self.clock = clock or (lambda: datetime.now(UTC))
        super().__init__(host)

    @property
    def requests(self) -> list[str]:
        """Paths requested so far, in the order they arrived."""
        return self.paths()

    def respond(self, path: str) -> tuple[int, str, str]:
        """(status, content type, body) for a path, as the site would answer it."""
        now = self.clock().replace(microsecond=0)
        site, origin = self.site, self.origin
        path = unquote(path.split("?", 1)[0])
        if path == "/robots.txt":
            return 200, "text/plain", site.robots_txt(origin)
        if path == "/sitemap.xml":
            return 200, "application/xml", site.sitemap(origin, now)
        if path.startswith("/sitemap-") and path.endswith(".xml"):
            section = path[len("/sitemap-") : -len(".xml")]
            if section in site.sections:
                return 200, "application/xml", site.section_sitemap(section, origin, now)
        page = site.page_html(path, now)
        if page is not None:
            return 200, "text/html; charset=utf-8", page
        return 404, "text/plain", "not found"

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        """The site's answer to a GET."""
        status, kind, text = self.respond(handler.path)
        send(handler, status, text.encode("utf-8"), kind)

    def wall_time(self) -> float:
        """The site's time, for the ``Date`` header."""
        return self.clock().timestamp()
