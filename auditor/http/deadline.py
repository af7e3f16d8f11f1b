"""The total deadline of one request: a watchdog that shuts its sockets down.

A per-read timeout lets a server that drips a byte a second hold a request
forever; this watchdog ends the whole request, headers and body, at its
deadline. requests' connections are made reachable to it through
:class:`WatchedAdapter`.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["Deadline", "WatchedAdapter", "current_request"]


class Deadline:
    """A watchdog that shuts down the sockets of one request when time is up."""

    def __init__(self, seconds: float) -> None:
        self.expires_at = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        """Seconds left (negative once expired)."""
        return self.expires_at - time.monotonic()

    def attach(self, sock: socket.socket | None) -> None:
        """Watch ``sock`` too (shut at once if the deadline has passed)."""
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shutdown(sock)

    def cancel(self) -> None:
        """Stop the watchdog: the request is over."""
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


current_request = threading.local()


def _attachcurrent_request(sock: socket.socket | None) -> None:
    deadline: Deadline | None = getattr(current_request, "deadline", None)
    if deadline is not None:
        deadline.attach(sock)


class _WatchedHTTPConnection(urllib3.connection.HTTPConnection):
    def getresponse(self) -> urllib3.response.BaseHTTPResponse:  # type: ignore[override]
        _attachcurrent_request(self.sock)
        return super().getresponse()


class _WatchedHTTPSConnection(urllib3.connection.HTTPSConnection):
    def getresponse(self) -> urllib3.response.BaseHTTPResponse:  # type: ignore[override]
        _attachcurrent_request(self.sock)
        return super().getresponse()


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class WatchedAdapter(HTTPAdapter):
    """requests' adapter with connections the deadline watchdog can reach."""

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        super().init_poolmanager(*args, **kwargs)  # type: ignore[arg-type]
        self.poolmanager.pool_classes_by_scheme = {
            "http": _WatchedHTTPPool,
            "https": _WatchedHTTPSPool,
        }
