"""A real HTTP server on 127.0.0.1 serving a fixture folder, with scriptable routes.

Files are served from ``root``; the text ``{{origin}}`` in a served file is
replaced by the server's own origin (``http://127.0.0.1:PORT``) so fixtures can
hold absolute URLs, and ``{{now}}``, ``{{now-90s}}``, ``{{today}}``,
``{{today-2d}}`` by the time of the request (UTC, W3C Datetime) so fixtures can
stamp the moment they are served, as a generating sitemap does (``now=`` fixes that
moment, for tests that compare two walks). ``NAME.gz``
is served gzip'd from ``NAME`` when only the latter exists. ``routes`` maps a
path to a function that writes the whole response itself (status codes, drips,
redirects, endless bodies). Every request is logged with the moments it arrived
and was answered (the shared base, :mod:`auditor.demo.loopback`).
"""

from __future__ import annotations

import gzip
import re
import ssl
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from auditor.demo.loopback import LoggedRequest, LoopbackHTTPServer, send

__all__ = ["FIXTURES", "TLS_CERT", "LoggedRequest", "LoopbackServer", "Route", "send"]

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


class LoopbackServer(LoopbackHTTPServer):
    """A threaded HTTP server on 127.0.0.1; use as a context manager or call ``close``."""

    def __init__(
        self,
        root: Path | None = None,
        routes: dict[str, Route] | None = None,
        *,
        tls: bool = False,  # serve https with TLS_CERT
        now: datetime | None = None,  # the moment {{now}} reads; None: each request's own
    ) -> None:
        self.root = root
        self.now = now
        self.routes = {} if routes is None else routes
        super().__init__(tls=_tls_context() if tls else None)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        route = self.routes.get(handler.path)
        if route is not None:
            route(handler)
            return
        path = handler.path.split("?", 1)[0]
        body = self.render(path)
        if body is None:
            send(handler, 404, b"not found", "text/plain")
        else:
            send(handler, 200, body, self.content_type(path))

    def render(self, relative: str) -> bytes | None:
        """A fixture file's bytes with ``{{origin}}`` filled in, or None if absent."""
        if self.root is None:
            return None
        path = (self.root / relative.lstrip("/")).resolve()
        if not path.is_relative_to(self.root.resolve()):
            return None
        if path.is_file():
            data = path.read_bytes()
            return _fill_times(data.replace(b"{{origin}}", self.origin.encode()), self.now)
        if path.suffix == ".gz" and path.with_suffix("").is_file():
            raw = self.render(relative[:-3])
            return None if raw is None else gzip.compress(raw, mtime=0)
        return None

    def content_type(self, path: str) -> str:
        """The Content-Type a served file gets, by its suffix."""
        return _TYPES.get(Path(path).suffix, "application/octet-stream")


def _tls_context() -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(TLS_CERT, TLS_CERT.with_name("loopback-key.pem"))
    return context


_TIME_FIELD = re.compile(rb"\{\{(now|today)(?:([+-]\d+)([sd]))?\}\}")


def _fill_times(data: bytes, fixed: datetime | None = None) -> bytes:
    """Replace ``{{now[+-Ns]}}`` and ``{{today[+-Nd]}}`` by ``fixed``, else the current UTC
    time."""
    if b"{{" not in data:
        return data
    now = (fixed or datetime.now(UTC)).replace(microsecond=0)

    def fill(match: re.Match[bytes]) -> bytes:
        kind, amount, unit = match.groups()
        shift = timedelta(**{"seconds" if unit == b"s" else "days": int(amount)} if amount else {})
        moment = now + shift
        if kind == b"today":
            return moment.strftime("%Y-%m-%d").encode()
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ").encode()

    return _TIME_FIELD.sub(fill, data)
