"""The plan bench's sites on loopback: one :class:`PlanSiteServer` per site, each on its
own 127.0.x.y address (a host name of its own, for per-host budgets and politeness), all
on one simulated clock (:class:`auditor.demo.clock.SimulatedClock`).

Sitemaps carry an ``ETag`` (a hash of the bytes) and answer a matching
``If-None-Match`` with 304, so conditional walks have something to reuse. Every page
served is logged with the instant the site served it and the version it held
(:attr:`PlanSiteServer.served`): the exact fetch instants freshness is measured on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from auditor.demo.loopback import LoopbackHTTPServer, send

from .world import PlanSite, World

__all__ = ["PlanSiteServer", "Served", "serve_world", "tagged_xml"]


@dataclass(frozen=True)
class Served:
    """One page as a server sent it: its path, the instant it was served, its version,
    and the User-Agent that asked for it."""

    path: str
    instant: int
    version: int
    agent: str = ""


def tagged_xml(xml: str, etag: str | None) -> tuple[int, str, bytes, dict[str, str]]:
    """A sitemap's answer with an ``ETag`` (a hash of its bytes): 304 to a matching
    ``If-None-Match``."""
    body = xml.encode()
    tag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
    if etag == tag:
        return 304, "application/xml", b"", {"ETag": tag}
    return 200, "application/xml", body, {"ETag": tag}


class PlanSiteServer(LoopbackHTTPServer):
    """One :class:`~.world.PlanSite` over HTTP at ``site.host``, on ``clock``."""

    poll_interval = 0.1  # dozens of idle servers in one process; closing waits this long

    def __init__(self, site: PlanSite, clock: Callable[[], datetime]) -> None:
        self.site = site
        self.clock = clock
        self.served: list[Served] = []
        super().__init__(site.host)

    def respond(
        self, path: str, etag: str | None = None, agent: str = ""
    ) -> tuple[int, str, bytes, dict[str, str]]:
        """(status, content type, body, headers) for a GET of ``path`` now."""
        s = self.site.instant(self.clock())
        path = unquote(path.split("?", 1)[0])
        site, origin = self.site, self.origin
        if path == "/robots.txt":
            return 200, "text/plain", site.robots_txt(origin).encode(), {}
        xml = None
        if path == "/sitemap.xml":
            xml = site.sitemap_xml(origin, s)
        elif path.startswith("/sitemap-") and path.endswith(".xml"):
            section = path[len("/sitemap-") : -len(".xml")]
            if section in site.spec.sections:
                xml = site.section_xml(section, origin, s)
        if xml is not None:
            return tagged_xml(xml, etag)
        return self.page(path, s, agent)

    def page(self, path: str, s: int, agent: str) -> tuple[int, str, bytes, dict[str, str]]:
        """The answer for the page at ``path`` at site instant ``s``, logged as served."""
        page = self.site.page_html(path, s)
        if page is None:
            return 404, "text/plain", b"not found", {}
        text, version = page
        self.served.append(Served(path, s, version, agent))
        return 200, "text/html; charset=utf-8", text.encode(), {}

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        """The site's answer to a GET."""
        asked = handler.headers
        status, kind, body, headers = self.respond(
            handler.path, asked.get("If-None-Match"), asked.get("User-Agent", "")
        )
        if status == 304:
            handler.send_response(304)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        send(handler, status, body, kind, headers)

    def wall_time(self) -> float:
        """The site's time, for the ``Date`` header."""
        return self.clock().timestamp()


@contextmanager
def serve_world(world: World, clock: Callable[[], datetime]) -> Iterator[list[PlanSiteServer]]:
    """Every site of ``world`` served on its own address, on ``clock``; closed on exit."""
    with ExitStack() as stack:
        servers = []
        for site in world.sites:
            servers.append(stack.enter_context(PlanSiteServer(site, clock)))
        yield servers
