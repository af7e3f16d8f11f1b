"""A site's requests in a fleet: every one through the host gate, within the site's time.

:class:`GatedHttpClient` is the HTTP door (:class:`~auditor.http.HttpClient`) with
the fleet's :class:`~auditor.fleet.gate.HostGate` in front of each request: the
walker's robots.txt and sitemaps and the sampler's pages all wait for
their host's turn, and the turn ends when the response's body is closed (a
sitemap streams for a while: nothing else asks the host meanwhile). The wait
comes before the request's own deadline starts: waiting politely is not the
server being slow.

The same client keeps the site's wall-clock bound (:class:`TimeLimit`): once it is
spent, no request is made any more (each is a ``timeout`` failure at once), so a
site that drags on winds down within one request's deadline, whatever stage it
is in.

Touches: the network.
"""

from __future__ import annotations

import contextlib
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from auditor.fleet.gate import GateLost, HostGate, host_of
from auditor.http import FetchFailure, HttpClient, HttpOptions, Response, retry_after_seconds
from auditor.sampler.pacing import HostPacer

__all__ = ["FleetPacer", "GatedHttpClient", "TimeLimit"]

_OVERLOADED = frozenset({429, 503})
#: URLs whose host a client remembers at most (a site's requests are a few dozen).
_MAX_HOSTS_KEPT = 256
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TimeLimit:
    """A site's wall-clock bound: ``seconds`` from ``started`` (on ``clock``)."""

    seconds: float
    started: float
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def starting_now(cls, seconds: float) -> TimeLimit:
        """A bound that starts now."""
        return cls(seconds, time.monotonic())

    @property
    def ends_at(self) -> float:
        """When the bound is spent, on ``clock``."""
        return self.started + self.seconds

    def spent(self) -> bool:
        """True once the bound is spent."""
        return self.clock() >= self.ends_at

    @property
    def detail(self) -> str:
        """Why a request was not made."""
        return f"not requested: the site's time limit ({self.seconds:g} s) is spent"


class GatedHttpClient(HttpClient):
    """An HttpClient whose every request waits for its host's turn in the fleet.

    ``pages``: this client fetches the site's pages (the sampler's), so the gate
    counts each of its requests but robots.txt as a page fetched."""

    def __init__(
        self, options: HttpOptions, gate: HostGate, limit: TimeLimit, *, pages: bool = False
    ) -> None:
        super().__init__(options)
        self.gate = gate
        self.limit = limit
        self.pages = pages
        self.refused = 0  # requests not made because the time limit was spent
        self.paused = 0.0  # seconds waited between the attempts of one turn
        self._attempt_ended: float | None = None  # the turn's last attempt (None: none yet)
        self._hosts: dict[str, str] = {}  # host_of each URL asked about, read once

    def _host_of(self, url: str) -> str:
        """:func:`host_of` ``url``, remembered: a request asks it three times (its turn,
        each attempt's before and last look)."""
        host = self._hosts.get(url)
        if host is None:
            if len(self._hosts) >= _MAX_HOSTS_KEPT:
                self._hosts.clear()
            host = self._hosts[url] = host_of(url)
        return host

    def get(self, url: str, **kwargs: Any) -> Response | FetchFailure:
        """GET ``url`` in its host's turn (the turn ends when its body is closed)."""
        host, page = self._host_of(url), self.pages and not _is_robots_txt(url)
        if self.limit.spent() or not self.gate.wait_turn(host, until=self.limit.ends_at):
            self.refused += 1
            return FetchFailure(url, "timeout", self.limit.detail)
        self._attempt_ended = None
        try:
            result = super().get(url, **kwargs)
        except BaseException:
            self.gate.finished(host)
            raise
        if isinstance(result, FetchFailure):
            self.gate.finished(host, result.status, page=page)
            return result
        status = result.status
        asked = retry_after_seconds(result.header("retry-after")) if status in _OVERLOADED else None
        turn = _Turn(self.gate, host, status, asked, page)
        result.body.also_on_close(turn.end)
        weakref.finalize(result.body, turn.end)  # a body dropped unclosed still ends its turn
        return result

    def before_send(self, url: str, remaining: float) -> FetchFailure | None:
        """Before each attempt of a request: a redirect hop or a retry waits the host's
        delay from the end of the attempt before it, as a new request would; then the
        host's turn must last until the attempt's deadline: a turn that would lapse
        first (this process was held up since it was granted: stopped, starved) may be
        another site's by then, so it is given back and taken again."""
        host = self._host_of(url)
        if self._attempt_ended is not None:
            pause = self._attempt_ended + self.gate.delay_for(host) - time.monotonic()
            if pause >= remaining:
                return FetchFailure(url, "timeout", "no time left for the host's delay")
            if pause > 0:
                self.paused += pause
                time.sleep(pause)
                remaining -= pause
        if remaining <= 0 or self.gate.holds(host, remaining):
            return None
        log.warning(
            "the turn of %s would lapse before its request to %s ended (this worker was "
            "held up since it was granted): taken again",
            host,
            url,
        )
        if self.gate.take_again(host, until=self.limit.ends_at):
            return None
        self.refused += 1
        return FetchFailure(url, "timeout", self.limit.detail)

    def last_look(self, url: str, ends_at: float) -> Callable[[], bool]:
        """With the connection made, right before the first byte: the turn must still
        last until the deadline. The check in :meth:`before_send` comes before the
        connection is made (a process stopped while connecting would send on a lapsed
        turn); called off here, the attempt goes back to :meth:`before_send`, which
        takes the turn again."""
        host = self._host_of(url)

        def turn_holds() -> bool:
            remaining = ends_at - self._clock()
            return remaining <= 0 or self.gate.holds(host, remaining)

        return turn_holds

    def _get_once(
        self, url: str, ends_at: float, cap: int, headers: dict[str, str] | None = None
    ) -> Response | FetchFailure:
        """One attempt; its end (its answer's headers, or its failure) is remembered, for
        the delay before a redirect hop or a retry of the same turn. A hop or a retry
        follows only once the answer before it is read and closed."""
        try:
            return super()._get_once(url, ends_at, cap, headers)
        finally:
            self._attempt_ended = time.monotonic()


class _Turn:
    """A host's turn held by one response: ended once, by whichever comes first."""

    def __init__(
        self, gate: HostGate, host: str, status: int, asked: float | None, page: bool
    ) -> None:
        self._end: tuple[HostGate, str, int, float | None, bool] | None = (
            gate, host, status, asked, page,
        )  # fmt: skip

    def end(self) -> None:
        """End the turn (again: nothing)."""
        if self._end is not None:
            gate, host, status, asked, page = self._end
            self._end = None
            # closing a body must not raise: a lost table's turns lapse with it, and the
            # site's next request hears that the table is lost
            with contextlib.suppress(GateLost):
                gate.finished(host, status, asked, page=page)


def _is_robots_txt(url: str) -> bool:
    """True for a site's robots.txt (asked by the sampler's client too: not a page)."""
    from urllib.parse import urlsplit

    return urlsplit(url).path == "/robots.txt"


class FleetPacer(HostPacer):
    """The sampler's own pacer (its delay, back-off and budget) that also tells the
    fleet's gate each robots.txt Crawl-delay, so it holds for every site on the host."""

    def __init__(self, delay: float, gate: HostGate) -> None:
        super().__init__(delay)
        self.gate = gate

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """Honour the Crawl-delay here and across the fleet."""
        super().honour_crawl_delay(host, crawl_delay)
        self.gate.honour_crawl_delay(host, crawl_delay)
