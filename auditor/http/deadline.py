"""The total deadline of one request: a watchdog that shuts its sockets down.

A per-read timeout lets a server that drips a byte a second hold a request
forever; this watchdog ends the whole request, headers and body, at its
deadline. requests' connections are made reachable to it through
:class:`WatchedAdapter`.

One watchdog thread serves every deadline of a process (a heap of them, earliest
first): a thread started for each request cost half a millisecond of CPU, a tenth of
what a small site's page costs.

The same connections take a *last look* before a request's first byte: with the
connection made, the thread's ``current_request.last_look`` (when set) may still call
the request off (:class:`CalledOff`), nothing sent. The fleet's client uses it to check
that its host's turn still holds at the last moment it can (:mod:`auditor.fleet.client`).

Touches: the network.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

import urllib3
from requests import PreparedRequest, Response
from requests.adapters import HTTPAdapter
from requests.exceptions import InvalidURL
from requests.structures import CaseInsensitiveDict
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool, port_by_scheme

from auditor.http.response_head import HeadReadingResponse

__all__ = ["CalledOff", "Deadline", "WatchedAdapter", "current_request"]


class Deadline:
    """A watchdog that shuts down the sockets of one request when time is up."""

    def __init__(self, seconds: float) -> None:
        self.expires_at = time.monotonic() + seconds
        self.expired = False
        self.cancelled = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        _WATCHDOG.watch(self)

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
        with self._lock:
            self.cancelled = True
            self._sockets.clear()
        _WATCHDOG.cancelled()

    def expire(self) -> None:
        """Time is up: shut the request's sockets (unless it was cancelled first)."""
        with self._lock:
            if self.cancelled:
                return
            self.expired = True
            for sock in self._sockets:
                _shutdown(sock)
            self._sockets.clear()  # the deadline may outlive them (the thread's last one)


class _Watchdog:
    """The process's one watchdog thread: expires each deadline at its time."""

    #: Cancelled deadlines the heap may hold before it is rebuilt without them.
    SWEEP_AFTER = 1024

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._wake = threading.Condition(threading.Lock())
        self._cancelled = 0
        self._thread: threading.Thread | None = None

    def watch(self, deadline: Deadline) -> None:
        with self._wake:
            entry = (deadline.expires_at, next(self._order), deadline)
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="auditor-deadlines", daemon=True
                )
                self._thread.start()
            if self._heap[0] is entry:
                self._wake.notify()

    def cancelled(self) -> None:
        with self._wake:
            self._cancelled += 1
            if self._cancelled > self.SWEEP_AFTER and self._cancelled > len(self._heap) // 2:
                self._heap = [e for e in self._heap if not e[2].cancelled]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._wake:
                due = self._next_due()
            if due is not None:
                due.expire()

    def _next_due(self) -> Deadline | None:
        """The next deadline past its time, once it is (None: a cancelled one dropped)."""
        while not self._heap:
            self._wake.wait()
        expires_at, _, deadline = self._heap[0]
        if deadline.cancelled:
            heapq.heappop(self._heap)
            self._cancelled = max(0, self._cancelled - 1)
            return None
        wait = expires_at - time.monotonic()
        if wait > 0:
            self._wake.wait(wait)  # or until an earlier deadline arrives
            return None
        heapq.heappop(self._heap)
        return deadline


_WATCHDOG = _Watchdog()
os.register_at_fork(after_in_child=_WATCHDOG._reset)  # the thread is not in the child


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


current_request = threading.local()

#: A URL's scheme and authority, up to the first ``/``, ``?`` or ``#`` after them: all a
#: request's pool depends on, with the TLS settings.
_ORIGIN = re.compile(r"[^:/?#]+://[^/?#]*")
#: Origins an adapter remembers the pool key of (a client talks to a site's few hosts).
_MAX_ORIGINS_KEPT = 256


def _attachcurrent_request(sock: socket.socket | None) -> None:
    deadline: Deadline | None = getattr(current_request, "deadline", None)
    if deadline is not None:
        deadline.attach(sock)


class CalledOff(Exception):
    """The request was called off at its last look, with its connection made and before
    its first byte went out (``current_request.last_look`` said no)."""


def _last_look(conn: urllib3.connection.HTTPConnection) -> None:
    """Make the connection, then ask the thread's ``last_look`` (if any) whether the
    request may still go out: the last moment a request can be called off."""
    look: Callable[[], bool] | None = getattr(current_request, "last_look", None)
    if look is None:
        return
    if conn.sock is None:
        conn.connect()
    if not look():
        raise CalledOff


class _WatchedHTTPConnection(urllib3.connection.HTTPConnection):
    response_class = HeadReadingResponse  # plain headers read without the email package

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> None:
        _last_look(self)
        super().request(method, url, *args, **kwargs)

    def getresponse(self) -> urllib3.response.BaseHTTPResponse:  # type: ignore[override]
        _attachcurrent_request(self.sock)
        return super().getresponse()


class _WatchedHTTPSConnection(_WatchedHTTPConnection, urllib3.connection.HTTPSConnection):
    """The same last look and deadline, over TLS (the methods above come first)."""


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


def _is_dir(verify: object) -> bool:
    """Whether ``verify`` names a folder of CA certificates (requests asks each request)."""
    return isinstance(verify, str) and os.path.isdir(verify)


class WatchedAdapter(HTTPAdapter):
    """requests' adapter with connections the deadline watchdog can reach.

    Its responses are built without what auditor never reads of them: no
    ``encoding`` guessed from the headers and no ``cookies`` of their own (the
    client keeps a response's cookies in its session's jar, once: requests'
    ``Session.send`` read them a second time).
    """

    def get_connection_with_tls_context(
        self,
        request: PreparedRequest,
        verify: bool | str | None,
        proxies: Mapping[str, str] | None = None,
        cert: Any = None,
    ) -> HTTPConnectionPool:
        """The pool of the request's host; without ``proxies``, found without asking
        which proxy the URL takes (requests parses the URL again to hear: none)."""
        if proxies:
            pool = super().get_connection_with_tls_context(request, verify, proxies, cert)
            return cast(HTTPConnectionPool, pool)
        origin = _ORIGIN.match(str(request.url))
        kept_as = None if origin is None else (origin[0], verify, cert, _is_dir(verify))
        if kept_as is not None and not isinstance(cert, str | tuple | None):
            kept_as = None  # a certificate given some other way: asked in full each time
        kept = self._pool_keys.get(kept_as) if kept_as is not None else None
        if kept is not None:  # the pool manager's own look-up, by the key it made before
            pool_key, context = kept
            manager = self.poolmanager
            pool = manager.connection_from_pool_key(pool_key, request_context=dict(context))
            return cast(HTTPConnectionPool, pool)
        try:
            host, pool_kwargs = self.build_connection_pool_key_attributes(
                request,
                verify,  # type: ignore[arg-type]  # as requests passes it on
                cert,
            )
        except ValueError as exc:  # as requests says it
            raise InvalidURL(exc, request=request) from exc
        pool = self.poolmanager.connection_from_host(**host, pool_kwargs=pool_kwargs)
        if kept_as is not None:
            self._keep_pool_key(kept_as, host, pool_kwargs)
        return cast(HTTPConnectionPool, pool)

    def _keep_pool_key(
        self, kept_as: tuple[str, object, object, bool], host: Mapping[str, Any], pool_kwargs: Any
    ) -> None:
        """Remember the pool key ``connection_from_host`` made for an origin (its own
        steps), so that the origin's next requests find their pool by it at once: a
        URL's scheme, host and port, and the TLS settings, are all the key is made of
        (``verify`` a path: a file or a folder, as requests looks each time)."""
        manager = self.poolmanager
        merge = getattr(manager, "_merge_pool_kwargs", None)
        if merge is None:  # another urllib3: asked in full each time
            return
        context = merge(pool_kwargs)
        context["scheme"] = host["scheme"] or "http"
        context["port"] = host["port"] or port_by_scheme.get(context["scheme"].lower(), 80)
        context["host"] = host["host"]
        pool_key = manager.key_fn_by_scheme[context["scheme"].lower()](context)
        if len(self._pool_keys) >= _MAX_ORIGINS_KEPT:
            self._pool_keys.clear()
        self._pool_keys[kept_as] = (pool_key, context)

    def request_url(self, request: PreparedRequest, proxies: Mapping[str, str] | None) -> str:
        """The URL in the request line: without ``proxies``, the path (as requests
        would find, after parsing the URL twice more to hear that no proxy is taken)."""
        if proxies:
            return super().request_url(request, proxies)
        return request.path_url

    def build_response(self, req: PreparedRequest, resp: Any) -> Response:
        """The requests Response around urllib3's ``resp``: status, headers, the raw
        stream, the request."""
        response = Response()
        response.status_code = resp.status
        response.headers = CaseInsensitiveDict(resp.headers)
        response.raw = resp
        response.reason = resp.reason
        response.url = req.url.decode("utf-8") if isinstance(req.url, bytes) else str(req.url)
        response.request = req
        response.connection = self
        return response

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        super().init_poolmanager(*args, **kwargs)  # type: ignore[arg-type]
        self._pool_keys: dict[tuple[str, object, object, bool], tuple[Any, dict[str, Any]]] = {}
        self.poolmanager.pool_classes_by_scheme = {
            "http": _WatchedHTTPPool,
            "https": _WatchedHTTPSPool,
        }
