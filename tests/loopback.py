"""A real HTTP server on 127.0.0.1 serving a fixture folder, with scriptable routes.

Files are served from ``root``; the text ``{{origin}}`` in a served file is
replaced by the server's own origin (``http://127.0.0.1:PORT``) so fixtures can
hold absolute URLs, and ``{{now}}``, ``{{now-90s}}``, ``{{today}}``,
``{{today-2d}}`` by the time of the request (UTC, W3C Datetime) so fixtures can
stamp the moment they are served, as a generating sitemap does. ``NAME.gz``
is served gzip'd from ``NAME`` when only the latter exists. ``routes`` maps a
path to a function that writes the whole response itself (status codes, drips,
redirects, endless bodies). Every request is logged with its arrival time.
"""

from __future__ import annotations

import gzip
import re
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
#: The self-signed certificate a ``tls=True`` server presents (trust it with ``verify=TLS_CERT``).
TLS_CERT = FIXTURES / "tls" / "loopback-cert.pem"

Route = Callable[[BaseHTTPRequestHandler], None]
_TYPES = {
    ".xml": "application/xml",
    ".txt": "text/plain",
    ".html": "text/html",
    ".gz": "application/gzip",
}


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up early (as the walker does at a deadline) is not an error."""

    def handle_error(self, request: object, client_address: object) -> None:
        pass


@dataclass
class LoggedRequest:
    method: str
    path: str
    headers: dict[str, str]
    at: float


@dataclass
class LoopbackServer:
    """A threaded HTTP server; use as a context manager or call ``close``."""

    root: Path | None = None
    routes: dict[str, Route] = field(default_factory=dict)
    log: list[LoggedRequest] = field(default_factory=list)
    tls: bool = False  # serve https with TLS_CERT

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body in one go: no 40 ms delayed-ACK stall

            def do_GET(self) -> None:
                server.log.append(
                    LoggedRequest("GET", self.path, dict(self.headers.items()), time.monotonic())
                )
                route = server.routes.get(self.path)
                try:
                    if route is not None:
                        route(self)
                    else:
                        server._serve_file(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if self.tls:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(TLS_CERT, TLS_CERT.with_name("loopback-key.pem"))
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        self.origin = f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def url(self, path: str) -> str:
        return self.origin + path

    def paths(self) -> list[str]:
        """Paths requested so far, in order."""
        return [r.path for r in self.log]

    def render(self, relative: str) -> bytes | None:
        """A fixture file's bytes with ``{{origin}}`` filled in, or None if absent."""
        if self.root is None:
            return None
        path = (self.root / relative.lstrip("/")).resolve()
        if not path.is_relative_to(self.root.resolve()):
            return None
        if path.is_file():
            data = path.read_bytes()
            return _fill_times(data.replace(b"{{origin}}", self.origin.encode()))
        if path.suffix == ".gz" and path.with_suffix("").is_file():
            raw = self.render(relative[:-3])
            return None if raw is None else gzip.compress(raw, mtime=0)
        return None

    def _serve_file(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        body = self.render(path)
        if body is None:
            send(handler, 404, b"not found", "text/plain")
            return
        send(handler, 200, body, _TYPES.get(Path(path).suffix, "application/octet-stream"))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_TIME_FIELD = re.compile(rb"\{\{(now|today)(?:([+-]\d+)([sd]))?\}\}")


def _fill_times(data: bytes) -> bytes:
    """Replace ``{{now[+-Ns]}}`` and ``{{today[+-Nd]}}`` by the current UTC time."""
    if b"{{" not in data:
        return data
    now = datetime.now(UTC).replace(microsecond=0)

    def fill(match: re.Match[bytes]) -> bytes:
        kind, amount, unit = match.groups()
        shift = timedelta(**{"seconds" if unit == b"s" else "days": int(amount)} if amount else {})
        moment = now + shift
        if kind == b"today":
            return moment.strftime("%Y-%m-%d").encode()
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ").encode()

    return _TIME_FIELD.sub(fill, data)


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"",
    content_type: str = "application/xml",
    headers: dict[str, str] | None = None,
) -> None:
    """Write a complete response with a Content-Length."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)
