"""Serving simulated sites on 127.0.0.1, one port (one origin) per site."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from auditor.demo.site import SimulatedSite

__all__ = ["SiteServer"]


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client hanging up early is not our problem


class SiteServer:
    """One simulated site on its own loopback port, served from a thread.

    ``clock`` tells the time the site lives in (its generation-time lastmods, render-time
    dates and ``Date`` headers); the real clock by default.
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
        self.requests: list[str] = []
        #: (arrived, answered, path) of each request, on time.monotonic: the server's log.
        self.log: list[tuple[float, float, str]] = []
        handler = _handler_for(self)
        self._httpd = _Quiet((host, 0), handler)
        self.origin = f"http://{host}:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

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

    def close(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> SiteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler_for(server: SiteServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body in one go: no 40 ms delayed-ACK stall

        def do_GET(self) -> None:
            arrived = time.monotonic()
            server.requests.append(self.path)
            status, kind, text = server.respond(self.path)
            body = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            server.log.append((arrived, time.monotonic(), self.path))

        def date_time_string(self, timestamp: float | None = None) -> str:
            moment = server.clock().timestamp() if timestamp is None else timestamp
            return formatdate(moment, usegmt=True)

        def log_message(self, *args: object) -> None:
            pass

    return Handler
