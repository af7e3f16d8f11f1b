"""The one door to the network: deadlines, byte caps, gzip, redirects and retries.

Every request auditor makes goes through :class:`HttpClient`:

- a **total** deadline per request: a watchdog shuts the socket down when it
  expires, so a server that drips a byte a second (headers or body) cannot hold
  a request past ``timeout``;
- the body is streamed, never read whole, and capped (``max_bytes`` after
  decompression): :class:`Body` stops at the cap and says so;
- gzip is judged by the magic bytes ``1f 8b``, whatever the name, and
  ``Content-Encoding: gzip``/``deflate`` is decoded here too, both capped;
- redirects are followed by hand: at most ``max_redirects``, and only on the
  same host (an off-host redirect is returned as a failure, not followed);
- 429 and 5xx are retried a bounded number of times with backoff, honouring
  ``Retry-After``.

Failures come back as :class:`FetchFailure` values, never as exceptions.
"""

from __future__ import annotations

import contextlib
import email.utils
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from auditor import __version__

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_TIMEOUT",
    "PAGE_ACCEPT",
    "SITEMAP_ACCEPT",
    "Body",
    "FetchFailure",
    "HttpClient",
    "HttpOptions",
    "Response",
    "read_local_file",
    "retry_after_seconds",
]

#: The sitemap protocol's size limit, uncompressed (50 MiB).
DEFAULT_MAX_BYTES = 52_428_800
#: Total seconds one request may take, connect to last byte.
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_REDIRECTS = 5
#: Retries after the first attempt, for 429 and 5xx only.
DEFAULT_RETRIES = 2
#: A Retry-After longer than this is not waited for: the failure is returned.
DEFAULT_MAX_RETRY_WAIT = 60.0
DEFAULT_CONTACT = "https://github.com/auditor-project/auditor"
#: Accept headers: what the walker asks for, and what the sampler asks for.
SITEMAP_ACCEPT = "application/xml,text/xml,text/plain,*/*;q=0.8"
PAGE_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
CHUNK_SIZE = 65_536
GZIP_MAGIC = b"\x1f\x8b"
#: Largest piece inflated at once, so a bomb never sits in memory whole.
_INFLATE_STEP = 4 * CHUNK_SIZE
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class HttpOptions:
    """How the client behaves; every field has a named default."""

    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    retries: int = DEFAULT_RETRIES
    backoff: float = 1.0
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    contact: str = DEFAULT_CONTACT
    accept: str = SITEMAP_ACCEPT

    @property
    def user_agent(self) -> str:
        """The User-Agent header: tool, version and contact."""
        return f"auditor/{__version__} (+{self.contact})"


@dataclass(frozen=True)
class FetchFailure:
    """A request that produced no usable response, with a walker problem code."""

    url: str
    code: str  # http-error | timeout | redirect | too-many-redirects
    detail: str
    status: int | None = None


class _TooLarge(Exception):
    pass


class _Deadline:
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
        return self.expires_at - time.monotonic()

    def attach(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shutdown(sock)

    def cancel(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


_current = threading.local()


def _attach_current(sock: socket.socket | None) -> None:
    deadline: _Deadline | None = getattr(_current, "deadline", None)
    if deadline is not None:
        deadline.attach(sock)


class _WatchedHTTPConnection(urllib3.connection.HTTPConnection):
    def getresponse(self) -> urllib3.response.BaseHTTPResponse:  # type: ignore[override]
        _attach_current(self.sock)
        return super().getresponse()


class _WatchedHTTPSConnection(urllib3.connection.HTTPSConnection):
    def getresponse(self) -> urllib3.response.BaseHTTPResponse:  # type: ignore[override]
        _attach_current(self.sock)
        return super().getresponse()


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class _WatchedAdapter(HTTPAdapter):
    """requests' adapter with connections the deadline watchdog can reach."""

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        super().init_poolmanager(*args, **kwargs)  # type: ignore[arg-type]
        self.poolmanager.pool_classes_by_scheme = {
            "http": _WatchedHTTPPool,
            "https": _WatchedHTTPSPool,
        }


class Body:
    """A response body streamed as decoded chunks, capped, with what went wrong.

    Iterate it once. Afterwards ``problem`` is ``None`` or a ``(code, detail)``
    pair (``too-large``, ``timeout``, ``not-well-formed`` for a broken gzip
    stream, ``http-error`` for a dropped connection); everything yielded
    before the problem is good data.
    """

    def __init__(
        self,
        raw_chunks: Iterator[bytes],
        *,
        content_encoding: str = "",
        max_bytes: int = DEFAULT_MAX_BYTES,
        deadline: _Deadline | None = None,
        on_close: Callable[[bool], None] | None = None,
    ) -> None:
        self._raw = raw_chunks
        self._encoding = content_encoding.strip().lower()
        self._max_bytes = max_bytes
        self._deadline = deadline
        self._on_close = on_close
        self.problem: tuple[str, str] | None = None
        self.bytes_read = 0  # decoded bytes handed out
        self.gzipped = False
        self.complete = False  # read to its end without a problem

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._capped(self._decoded())
            self.complete = True
        except _TooLarge:
            self.problem = ("too-large", f"stopped at the {self._max_bytes:,}-byte limit")
        except zlib.error as exc:
            self.problem = ("not-well-formed", f"broken compressed stream: {exc}")
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            self.problem = self._network_problem(exc)
        finally:
            self.close()

    def close(self) -> None:
        """Release the connection (idempotent)."""
        if self._deadline is not None:
            self._deadline.cancel()
        if self._on_close is not None:
            self._on_close(self.complete)
            self._on_close = None

    def _network_problem(self, exc: BaseException) -> tuple[str, str]:
        read = f"{self.bytes_read:,} bytes"
        deadline = self._deadline
        if deadline is not None and (deadline.expired or deadline.remaining() <= 0):
            return ("timeout", f"body not complete within the deadline ({read} read)")
        return ("http-error", f"connection broken after {read}: {type(exc).__name__}")

    def _timed(self) -> Iterator[bytes]:
        for chunk in self._raw:
            if self._deadline is not None and self._deadline.remaining() <= 0:
                raise TimeoutError("deadline")
            if chunk:
                yield chunk

    def _decoded(self) -> Iterator[bytes]:
        chunks = self._timed()
        if self._encoding in ("gzip", "x-gzip"):
            chunks = _inflate(chunks, 16 + zlib.MAX_WBITS, self._max_bytes)
        elif self._encoding == "deflate":
            chunks = _inflate_deflate(chunks, self._max_bytes)
        first = b""
        for chunk in chunks:  # gather two bytes to judge gzip by its magic
            first += chunk
            if len(first) >= 2:
                break
        if first[:2] == GZIP_MAGIC:
            self.gzipped = True
            yield from _inflate(_prepend(first, chunks), 16 + zlib.MAX_WBITS, self._max_bytes)
        else:
            yield from _prepend(first, chunks)

    def _capped(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            room = self._max_bytes - self.bytes_read
            if len(chunk) > room:
                if room:
                    self.bytes_read += room
                    yield chunk[:room]
                raise _TooLarge
            self.bytes_read += len(chunk)
            yield chunk


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _inflate(chunks: Iterator[bytes], wbits: int, cap: int) -> Iterator[bytes]:
    """Decompress a (possibly multi-member) stream in bounded pieces, at most cap+1 bytes."""
    inflater = zlib.decompressobj(wbits)
    produced = 0
    between_members = True  # no member started yet, or the last one ended cleanly
    carry = b""  # the start of a next member's header split across chunks
    for chunk in chunks:
        data = carry + chunk if carry else chunk
        carry = b""
        while data or not between_members:
            if between_members:
                if produced and len(data) < 2:
                    carry = data
                    break
                if produced and data[:2] != GZIP_MAGIC:
                    return  # trailing bytes after the last member are ignored
                inflater = zlib.decompressobj(wbits)
                between_members = False
            step = min(cap - produced + 1, _INFLATE_STEP)
            out = inflater.decompress(data, step)
            produced += len(out)
            if out:
                yield out
            if produced > cap:
                return  # Body._capped raises _TooLarge on the extra byte
            if inflater.eof:
                data, between_members = inflater.unused_data, True
                continue
            data = inflater.unconsumed_tail
            if not data and len(out) < step:
                break  # this chunk is used up and nothing is pending
    if not between_members:
        raise zlib.error("truncated compressed stream")


def _inflate_deflate(chunks: Iterator[bytes], cap: int) -> Iterator[bytes]:
    """``Content-Encoding: deflate``: zlib-wrapped as the RFC says, or raw as some servers send."""
    first = next(chunks, b"")
    wbits = zlib.MAX_WBITS if first[:1] and (first[0] & 0x0F) == 8 else -zlib.MAX_WBITS
    return _inflate(_prepend(first, chunks), wbits, cap)


@dataclass
class Response:
    """A response whose headers are read and whose body is waiting to be streamed."""

    url: str  # the URL asked for
    final_url: str  # after same-host redirects
    status: int
    headers: dict[str, str]
    fetched_at: datetime
    body: Body
    redirects: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    def header(self, name: str) -> str | None:
        """A header's value by case-insensitive name, or None."""
        return self.headers.get(name.lower())

    def close(self) -> None:
        """Release the connection without reading the body."""
        self.body.close()


class HttpClient:
    """The requests Session auditor uses, with deadlines, caps, redirects and retries."""

    def __init__(self, options: HttpOptions | None = None) -> None:
        self.options = options or HttpOptions()
        self.session = requests.Session()
        adapter = _WatchedAdapter(pool_connections=4, pool_maxsize=8, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers.update(
            {
                "User-Agent": self.options.user_agent,
                "Accept-Encoding": "gzip, deflate",
                "Accept": self.options.accept,
            }
        )
        self._sleep = time.sleep

    def close(self) -> None:
        """Close every pooled connection."""
        self.session.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, url: str, *, max_bytes: int | None = None) -> Response | FetchFailure:
        """GET ``url`` within the deadline, retrying 429/5xx; the body is left to stream."""
        cap = self.options.max_bytes if max_bytes is None else max_bytes
        attempt = 0
        while True:
            result = self._get_following_redirects(url, cap)
            wait = self._retry_wait(result, attempt)
            if wait is None:
                return result
            assert isinstance(result, Response)
            result.close()
            self._sleep(wait)
            attempt += 1

    def _retry_wait(self, result: Response | FetchFailure, attempt: int) -> float | None:
        if not isinstance(result, Response) or attempt >= self.options.retries:
            return None
        if result.status != 429 and result.status < 500:
            return None
        backoff = self.options.backoff * (2**attempt)
        asked = retry_after_seconds(result.header("retry-after"))
        wait = backoff if asked is None else max(asked, backoff)
        return None if wait > self.options.max_retry_wait else wait

    def _get_following_redirects(self, url: str, cap: int) -> Response | FetchFailure:
        deadline = _Deadline(self.options.timeout)
        seen = [url]
        current = url
        try:
            for _ in range(self.options.max_redirects + 1):
                result = self._get_once(current, deadline, cap)
                if isinstance(result, FetchFailure) or result.status not in _REDIRECT_STATUSES:
                    if isinstance(result, Response):
                        result.url, result.redirects = url, seen[1:]
                    else:
                        deadline.cancel()
                    return result
                target = urljoin(current, result.header("location") or "")
                result.close()
                if not _same_host(url, target):
                    return FetchFailure(
                        url, "redirect", f"{result.status} to another host: {target}", result.status
                    )
                if target in seen:
                    return FetchFailure(url, "too-many-redirects", f"redirect loop via {target}")
                seen.append(target)
                current = target
                deadline = _Deadline(max(deadline.remaining(), 0.0))
            deadline.cancel()
            return FetchFailure(
                url, "too-many-redirects", f"more than {self.options.max_redirects} redirects"
            )
        except BaseException:
            deadline.cancel()
            raise

    def _get_once(self, url: str, deadline: _Deadline, cap: int) -> Response | FetchFailure:
        remaining = deadline.remaining()
        if remaining <= 0:
            return FetchFailure(url, "timeout", f"no response within {self.options.timeout:g} s")
        _current.deadline = deadline
        try:
            resp = self.session.get(
                url, stream=True, allow_redirects=False, timeout=(remaining, remaining)
            )
        except requests.RequestException as exc:
            deadline.cancel()
            if deadline.expired or isinstance(exc, requests.Timeout):
                detail = f"no response within {self.options.timeout:g} s"
                return FetchFailure(url, "timeout", detail)
            return FetchFailure(url, "http-error", f"connection failed: {_short(exc)}")
        finally:
            _current.deadline = None
        headers = {k.lower(): v for k, v in resp.headers.items()}
        body = Body(
            _read_as_it_arrives(resp.raw),
            content_encoding=headers.get("content-encoding", ""),
            max_bytes=cap,
            deadline=deadline,
            on_close=lambda complete: _release(resp, complete),
        )
        return Response(url, url, resp.status_code, headers, datetime.now(UTC), body)


def _read_as_it_arrives(raw: urllib3.response.BaseHTTPResponse) -> Iterator[bytes]:
    """The raw body in pieces as they arrive (``read1``), so that when the deadline
    cuts a slow response, every byte received before the cut is kept."""
    while chunk := raw.read1(CHUNK_SIZE, decode_content=False):
        yield chunk


def read_local_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Body:
    """A local file as a :class:`Body`: same gzip sniffing and cap as the network."""
    handle = path.open("rb")

    def chunks() -> Iterator[bytes]:
        while chunk := handle.read(CHUNK_SIZE):
            yield chunk

    return Body(chunks(), max_bytes=max_bytes, on_close=lambda _complete: handle.close())


def _release(resp: requests.Response, complete: bool) -> None:
    """Give a fully read connection back to the pool; close one left mid-body."""
    if complete:
        resp.raw.release_conn()
    else:
        resp.close()


def _same_host(a: str, b: str) -> bool:
    target = urlsplit(b)
    return target.scheme in ("http", "https") and (urlsplit(a).hostname or "") == (
        target.hostname or ""
    )


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def _short(exc: BaseException) -> str:
    text = str(exc)
    for marker in ("Connection refused", "Name or service not known", "timed out", "reset"):
        if marker in text:
            return marker
    return type(exc).__name__ if len(text) > 200 else text
