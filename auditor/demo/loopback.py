"""Servers on loopback, for the demo and the tests: what every one of them does, once.

A :class:`LoopbackService` listens on a free port of one loopback address (each
simulated site may have a 127.x.y.z of its own, so a host of its own), serves from a
daemon thread until closed (``with`` or :meth:`~LoopbackService.close`), and logs
every request: when it arrived and when the server was done with it.
:class:`LoopbackHTTPServer` answers with :mod:`http.server`: HTTP/1.1, no Nagle delay,
quiet about clients that hang up early; a subclass says what a GET gets
(:meth:`~LoopbackHTTPServer.answer`), usually through :func:`send`.

Touches: the network.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import TCPServer
from typing import Any, Self

__all__ = ["LoggedRequest", "LoopbackHTTPServer", "LoopbackService", "send"]


@dataclass
class LoggedRequest:
    """One request as the server saw it; times on ``time.monotonic``."""

    method: str
    path: str
    headers: dict[str, str]
    at: float  # when it arrived
    answered: float | None = None  # when the server was done with it (None: not yet)
    #: when its last write began (:func:`send`): the client cannot have had the whole
    #: answer before, while ``answered`` may come later than the client had it (the
    #: server's thread taking the GIL back after the write)
    writing: float | None = None


class LoopbackService:
    """A listening socket served from a daemon thread, and the log of its requests.

    A subclass sets up its own state, binds its socket, then calls this constructor,
    which starts serving: :meth:`_serve` runs in the thread until :meth:`_halt`.
    """

    def __init__(self, listener: socket.socket, *, scheme: str = "http") -> None:
        self.host, self.port = listener.getsockname()[:2]
        self.origin = f"{scheme}://{self.host}:{self.port}"
        self.log: list[LoggedRequest] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this server."""
        return self.origin + path

    def paths(self) -> list[str]:
        """Paths requested so far, in the order they arrived."""
        return [r.path for r in self.log]

    def close(self) -> None:
        """Stop serving (again: nothing more happens)."""
        self._halt()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.origin})"

    def _serve(self) -> None:
        raise NotImplementedError

    def _halt(self) -> None:
        raise NotImplementedError


class _QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, owner: LoopbackHTTPServer) -> None:
        self.owner = owner
        super().__init__((host, 0), _Handler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse lookup of the address (``socket.getfqdn``):
        tens of milliseconds a server where no resolver answers for 127.x addresses,
        minutes for a benchmark's thousands of sites."""
        TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client hanging up early (as one does at its deadline) is not an error


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body in one go: no 40 ms delayed-ACK stall
    server: _QuietHTTPServer

    def do_GET(self) -> None:
        self.server.owner._handle(self)

    def date_time_string(self, timestamp: float | None = None) -> str:
        moment = self.server.owner.wall_time() if timestamp is None else timestamp
        return formatdate(moment, usegmt=True)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LoopbackHTTPServer(LoopbackService):
    """An HTTP server on ``host`` (a loopback address), https with a ``tls`` context."""

    #: Seconds between two looks for :meth:`close` while idle (thousands of idle servers in
    #: one process may look rarely; closing then takes up to that long).
    poll_interval: float = 0.05

    def __init__(self, host: str = "127.0.0.1", *, tls: ssl.SSLContext | None = None) -> None:
        self._httpd = _QuietHTTPServer(host, self)
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        super().__init__(self._httpd.socket, scheme="http" if tls is None else "https")

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        """Write the whole response to a GET (a subclass decides; here: 404)."""
        send(handler, 404, b"not found", "text/plain")

    def wall_time(self) -> float:
        """The time of the ``Date`` header, in seconds since the epoch (now, unless overridden)."""
        return time.time()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        headers = dict(handler.headers.items())
        request = LoggedRequest(handler.command, handler.path, headers, time.monotonic())
        self.log.append(request)
        handler.logged = request  # type: ignore[attr-defined]
        try:
            self.answer(handler)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up first
        finally:
            request.answered = time.monotonic()

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=self.poll_interval)

    def _halt(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


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
    logged: LoggedRequest | None = getattr(handler, "logged", None)
    if logged is not None:
        logged.writing = time.monotonic()
    handler.end_headers()
    handler.wfile.write(body)
