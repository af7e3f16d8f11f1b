"""The HTTP client: deadlines, byte caps, decoding, redirects and retries (touches the
network; nothing else).

Every request auditor makes goes through :class:`HttpClient`:

- a **total** deadline per request: ``timeout`` bounds one :meth:`HttpClient.get`
  whole, connect to last byte, redirects, retries and their waits included. A
  watchdog shuts the socket down when it expires, so a server that drips a byte
  a second (headers or body) cannot hold a request past it, and a body it cuts
  off is a ``timeout``, never a complete read;
- the body is streamed, never read whole, and capped (``max_bytes`` after
  decompression): :class:`Body` stops at the cap and says so;
- gzip is judged by the magic bytes ``1f 8b``, whatever the name, and
  ``Content-Encoding: gzip``/``deflate``/``br``/``zstd`` is decoded here too, all
  capped; another coding is ``unsupported-encoding``, never parsed;
- hosts are keyed, and requested, in one spelling (:mod:`auditor.http.hosts`): IDNA,
  case, the trailing dot, IPv6 literals, the default port;
- requests leave through ``HttpOptions.proxy`` or the environment's proxy
  (:mod:`auditor.http.proxy`), with the user's ``HttpOptions.headers`` added
  (:mod:`auditor.http.extra_headers`: never a User-Agent, values never logged);
- redirects are followed by hand: at most ``max_redirects``, and only within
  the origin (:mod:`auditor.http.redirects`: scheme, host and port, or the ``https``
  upgrade of the same host); any other is returned as a failure, not followed.
  A caller may refuse more (``may_follow``, e.g. robots.txt): each target is
  asked about before it is requested;
- 429 and 5xx are retried a bounded number of times with backoff, honouring
  ``Retry-After``, as long as the wait ends before the deadline.

Failures come back as :class:`FetchFailure` values, never as exceptions.

Touches: the network.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import requests
from requests._internal_utils import to_native_string
from requests.cookies import extract_cookies_to_jar
from requests.structures import CaseInsensitiveDict
from requests.utils import check_header_validity

from auditor.http.body import Body, read_as_it_arrives
from auditor.http.causes import CONNECTION_FAILED, cause_of
from auditor.http.codings import ACCEPT_ENCODING
from auditor.http.deadline import CalledOff, Deadline, WatchedAdapter, current_request
from auditor.http.hosts import request_url
from auditor.http.options import (
    DEFAULT_CONTACT,
    DEFAULT_MAX_REDIRECTS,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    PAGE_ACCEPT,
    SITEMAP_ACCEPT,
    FetchFailure,
    HttpOptions,
    MayFollow,
)
from auditor.http.proxy import ProxyChooser, ca_bundle
from auditor.http.redirects import (
    REDIRECT_STATUSES,
    off_origin,
    redirect_target,
    retry_after_seconds,
    same_origin,
)

__all__ = [
    "DEFAULT_CONTACT",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_MAX_RETRY_WAIT",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "PAGE_ACCEPT",
    "SITEMAP_ACCEPT",
    "FetchFailure",
    "HttpClient",
    "HttpOptions",
    "MayFollow",
    "Response",
    "retry_after_seconds",
    "same_origin",
]

_log = logging.getLogger(__name__)

#: The headers a server sets cookies with (``http.cookiejar`` reads these two only;
#: urllib3's headers match them whatever their case).
_SETS_COOKIES = frozenset({"set-cookie", "set-cookie2"})


@dataclass
class Response:
    """A response whose headers are read and whose body is waiting to be streamed."""

    url: str  # the URL asked for
    final_url: str  # after redirects on the origin
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
    """The requests Session auditor uses, with deadlines, caps, redirects and retries.

    ``clock`` and ``sleep`` (a monotonic clock and the retry waits) can be replaced,
    together, so that a test's recorded waits count against the deadline.
    """

    def __init__(
        self,
        options: HttpOptions | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.options = options or HttpOptions()
        self.session = requests.Session()
        adapter = WatchedAdapter(pool_connections=4, pool_maxsize=8, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.trust_env = False  # the environment is read explicitly (proxy.py)
        self.session.verify = ca_bundle()
        self.session.headers.update(
            {
                "User-Agent": self.options.user_agent,
                "Accept-Encoding": ACCEPT_ENCODING,
                "Accept": self.options.accept,
            }
        )
        self.session.headers.update(dict(self.options.headers))
        self.session.headers = _CountedHeaders(self.session.headers)
        _log.debug("HTTP client: %s", self.options.described)
        self._clock = clock
        self._session_headers = _SessionHeaders()
        self._proxies = ProxyChooser(self.options.proxy, env=self.options.env_proxy)
        self._sleep = sleep

    def close(self) -> None:
        """Close every pooled connection."""
        self.session.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(
        self,
        url: str,
        *,
        max_bytes: int | None = None,
        may_follow: MayFollow | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response | FetchFailure:
        """GET ``url``, retrying 429/5xx; the body is left to stream.

        One deadline, ``timeout`` seconds from now, bounds it all: every attempt and
        redirect, every retry wait, and the body's read. A wait that would not end
        before the deadline is not taken: the last answer stands. ``may_follow`` is
        asked about each redirect target before it is requested (see :data:`MayFollow`).
        ``headers`` are added to every attempt and hop of this request only (e.g.
        :func:`conditional_headers`).
        """
        cap = self.options.max_bytes if max_bytes is None else max_bytes
        ends_at = self._clock() + self.options.timeout
        extra = dict(headers) if headers else None
        attempt = 0
        while True:
            result = self._get_following_redirects(url, cap, ends_at, may_follow, extra)
            wait = self._retry_wait(result, attempt, ends_at - self._clock())
            if wait is None:
                return result
            assert isinstance(result, Response)
            result.close()
            _log.info(
                "HTTP %d from %s: retry %d of %d in %g s (Retry-After %s, backoff %g s)",
                result.status,
                url,
                attempt + 1,
                self.options.retries,
                wait,
                result.header("retry-after") or "none",
                self.options.backoff * (2**attempt),
            )
            self._sleep(wait)
            attempt += 1

    def _retry_wait(
        self, result: Response | FetchFailure, attempt: int, remaining: float
    ) -> float | None:
        if not isinstance(result, Response) or attempt >= self.options.retries:
            return None
        if result.status != 429 and result.status < 500:
            return None
        backoff = self.options.backoff * (2**attempt)
        asked = retry_after_seconds(result.header("retry-after"))
        wait = backoff if asked is None else max(asked, backoff)
        if wait > self.options.max_retry_wait:
            _log.info(
                "HTTP %d from %s: not retried, a wait of %g s is over the %g s cap",
                result.status,
                result.url,
                wait,
                self.options.max_retry_wait,
            )
        return None if wait > self.options.max_retry_wait or wait >= remaining else wait

    def _get_following_redirects(
        self,
        url: str,
        cap: int,
        ends_at: float,
        may_follow: MayFollow | None,
        headers: dict[str, str] | None = None,
    ) -> Response | FetchFailure:
        seen = [url]
        current = url
        for _ in range(self.options.max_redirects + 1):
            result = self._get_once(current, ends_at, cap, headers)
            if isinstance(result, FetchFailure):
                _log.info("GET %s failed: %s: %s", current, result.code, result.detail)
                return result
            if result.status not in REDIRECT_STATUSES:
                result.url, result.redirects = url, seen[1:]
                return result
            result.close()
            status = result.status
            target = redirect_target(current, result.header("location") or "")
            if target is None:
                detail = f"{status} to a Location that is not a URL: {result.header('location')!r}"
                return FetchFailure(url, "http-error", detail[:300], status)
            if (reason := off_origin(current, target)) is not None:
                return FetchFailure(url, "redirect", f"{status} {reason}: {target}", status)
            if may_follow is not None and (reason := may_follow(target)) is not None:
                return FetchFailure(url, "refused", reason, status)
            if target in seen:
                return FetchFailure(url, "too-many-redirects", f"redirect loop via {target}")
            seen.append(target)
            _log.debug("following HTTP %d from %s to %s", status, current, target)
            current = target
        return FetchFailure(
            url, "too-many-redirects", f"more than {self.options.max_redirects} redirects"
        )

    def before_send(self, url: str, remaining: float) -> FetchFailure | None:
        """Called right before each attempt of a request goes out (the first, each
        redirect hop, each retry), ``remaining`` seconds before its deadline; a failure
        returned is the attempt's answer. Nothing here; a subclass may wait (the fleet's
        client makes sure its host's turn still holds)."""
        return None

    def last_look(self, url: str, ends_at: float) -> Callable[[], bool] | None:
        """What each attempt asks with its connection made, right before its first byte
        goes out: False calls the attempt off (nothing sent) and it starts again from
        :meth:`before_send`, within the same deadline. None here: nothing to ask."""
        return None

    def _get_once(
        self, url: str, ends_at: float, cap: int, headers: dict[str, str] | None = None
    ) -> Response | FetchFailure:
        while True:
            refused = self.before_send(url, ends_at - self._clock())
            if refused is not None:
                return refused
            result = self._attempt(url, ends_at, cap, headers)
            if result is not None:
                return result
            _log.info("GET %s called off at its last look, before it went out", url)

    def _attempt(
        self, url: str, ends_at: float, cap: int, headers: dict[str, str] | None
    ) -> Response | FetchFailure | None:
        """One request on the wire; None when it was called off before it went out."""
        remaining = ends_at - self._clock()
        if remaining <= 0:
            return FetchFailure(url, "timeout", self._timeout_detail())
        deadline = Deadline(remaining)
        current_request.deadline = deadline
        current_request.last_look = self.last_look(url, ends_at)
        started = time.monotonic()
        try:
            resp = self._send(request_url(url), headers, remaining, self._proxies(url))
        except requests.RequestException as exc:
            deadline.cancel()
            if deadline.expired or isinstance(exc, requests.Timeout):
                return FetchFailure(url, "timeout", self._timeout_detail())
            return FetchFailure(url, "http-error", CONNECTION_FAILED + cause_of(exc))
        except ValueError as exc:  # from the stack, not a RequestException: named, not raised
            deadline.cancel()
            return FetchFailure(url, "http-error", f"unusable response: {cause_of(exc)}")
        except CalledOff:
            deadline.cancel()
            return None
        except BaseException:
            deadline.cancel()
            raise
        finally:
            current_request.deadline = current_request.last_look = None
        headers = {k.lower(): v for k, v in resp.headers.items()}
        body = Body(
            read_as_it_arrives(resp.raw),
            content_encoding=headers.get("content-encoding", ""),
            max_bytes=cap,
            deadline=deadline,
            on_close=lambda complete: _done(url, resp, body, started, complete),
        )
        return Response(url, url, resp.status_code, headers, datetime.now(UTC), body)

    def _send(
        self,
        url: str,
        headers: dict[str, str] | None,
        remaining: float,
        proxies: dict[str, str],
    ) -> requests.Response:
        """What ``session.send`` did for auditor, without its per-call work auditor has
        no use for (hooks, its own redirect look-ahead, merging settings): the adapter
        for the URL's scheme (requests' ``InvalidSchema`` for another), the request sent
        through ``proxies`` with the session's TLS settings, streamed, and the
        response's cookies kept in the session's jar for the client's next requests."""
        prepared = self._prepared(url, headers)
        adapter = self.session.get_adapter(prepared.url or url)
        resp = adapter.send(
            prepared,
            stream=True,
            timeout=(remaining, remaining),
            verify=self.session.verify,  # type: ignore[arg-type]  # passed on as send did
            cert=self.session.cert,
            proxies=proxies,
        )
        if any(name in resp.raw.headers for name in _SETS_COOKIES):  # else nothing to keep
            extract_cookies_to_jar(self.session.cookies, prepared, resp.raw)  # type: ignore[no-untyped-call]
        return resp

    def _prepared(self, url: str, headers: dict[str, str] | None) -> requests.PreparedRequest:
        """The request ``session.get`` would send, made without its merging of settings
        (a third of its CPU, in requests 2.34 mostly ``isinstance`` checks against typing
        protocols): the session's headers and then ``headers``, its cookies (when it has
        any: an empty jar adds no header), credentials in the URL (when it has any), no
        params (the session has none, and reads no environment: ``trust_env`` is off).
        The session's headers are checked by requests once (:class:`_SessionHeaders`)."""
        prepared = requests.PreparedRequest()
        prepared.prepare_method("GET")
        prepared.prepare_url(url, None)
        checked = self._session_headers.checked(self.session.headers)
        if checked is None:  # as requests does it (and says what it refuses, each time)
            merged = CaseInsensitiveDict(self.session.headers)
            if headers:
                merged.update(headers)
            prepared.prepare_headers(merged)
        else:
            prepared.headers = checked
            for header in (headers or {}).items():  # as prepare_headers adds each
                check_header_validity(header)
                checked[to_native_string(header[0])] = header[1]
        if len(self.session.cookies):
            prepared.prepare_cookies(self.session.cookies)
        prepared.prepare_body(None, None)
        if "@" in (prepared.url or ""):  # else requests finds no credentials in it
            prepared.prepare_auth(None, url)
        return prepared

    def _timeout_detail(self) -> str:
        return f"timed out after {self.options.timeout:g} s"


class _CountedHeaders(CaseInsensitiveDict[str | bytes]):
    """The session's headers, counting their changes (so a prepared copy knows it is old)."""

    changes = 0

    def __setitem__(self, key: str, value: str | bytes) -> None:
        self.changes += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.changes += 1
        super().__delitem__(key)


class _SessionHeaders:
    """The session's headers as ``PreparedRequest.prepare_headers`` makes them, checked
    once: a copy for each request, made again when the session's headers change."""

    def __init__(self) -> None:
        self._of: tuple[object, int] | None = None
        self._prepared: CaseInsensitiveDict[str] | None = None

    def checked(self, headers: Mapping[str, str | bytes]) -> CaseInsensitiveDict[str] | None:
        """A copy of ``headers`` prepared, or None when requests refuses one of them (or
        they are not :class:`_CountedHeaders`: their changes are not known)."""
        if not isinstance(headers, _CountedHeaders):
            return None
        if self._of is None or self._of[0] is not headers or self._of[1] != headers.changes:
            self._of, self._prepared = (headers, headers.changes), None
            with contextlib.suppress(requests.RequestException):
                prepared = requests.PreparedRequest()
                prepared.prepare_headers(headers)
                self._prepared = prepared.headers
        return None if self._prepared is None else self._prepared.copy()


def _release(resp: requests.Response, complete: bool) -> None:
    """Give a fully read connection back to the pool; close one left mid-body."""
    if complete:
        resp.raw.release_conn()
    else:
        resp.close()


def _done(url: str, resp: requests.Response, body: Body, started: float, complete: bool) -> None:
    """The body is done with: release the connection and log the request."""
    _release(resp, complete)
    if not _log.isEnabledFor(logging.INFO):
        return
    read = f"{body.bytes_read:,} bytes"  # as handed out, after decompression
    if body.problem is not None:
        read += f", stopped: {body.problem[0]}"
    elif not complete:
        read = f"{read} (not read to the end)" if body.bytes_read else "body not read"
    elapsed = time.monotonic() - started
    _log.info("GET %s -> %d, %s, %.3f s", url, resp.status_code, read, elapsed)
