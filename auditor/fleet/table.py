"""The fleet's host table itself: every host's turn, delay and queue, in one place.

The design, and why, is :mod:`auditor.fleet.gate`'s; the table is served as a Dask actor
(:mod:`auditor.fleet.cluster`) and on a socket of its own (:mod:`auditor.fleet.channel`).

Touches: nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from auditor.sampler.pacing import DEFAULT_DELAY, MAX_DELAY, SLOW_DOWN_FACTOR

__all__ = [
    "CHECK_EVERY",
    "FORGET_EVERY",
    "KEPT",
    "LAPSED",
    "MIN_POLL",
    "OVERLOADED",
    "STALE_AFTER",
    "WANTED",
    "HostTable",
    "delay_after",
    "raised_floor",
]

#: The shortest wait the table hands out while another request holds the host
#: (with a zero delay, how often a waiter asks again).
MIN_POLL = 0.02
#: A waiter that has not come back this long after it was told to is dropped.
STALE_AFTER = 2.0
#: Seconds between two looks for hosts the table may forget.
FORGET_EVERY = 30.0
#: A site keeping a host's turn asks the table again once it has kept it this long
#: (before its next request): whether another waits for the host (then the turn is given
#: back), and for the lease afresh. Less than a lease's margin over the request's
#: deadline (:data:`auditor.fleet.work.LEASE_MARGIN`), so a turn kept in use never runs
#: short before its request; and a site waiting for a host in use waits about this long.
CHECK_EVERY = 5.0
#: :meth:`HostTable.renew`'s answers: the turn is kept; another waits for the host; the
#: turn lapsed (it may be another's now).
KEPT, WANTED, LAPSED = "kept", "wanted", "lapsed"
OVERLOADED = frozenset({429, 503})


def delay_after(delay: float, base: float, status: int | None, retry_after: float | None) -> float:
    """A host's delay once a request to it was answered ``status``: after 429 or 503,
    doubled or what ``Retry-After`` asks, whichever is longer (at most MAX_DELAY); after
    another answer, halved back towards ``base``; unanswered (None), as it was. The
    table's rule, and a turn's kept by a site (:class:`auditor.fleet.gate.HostGate`)."""
    if status in OVERLOADED:
        asked = min(retry_after or 0.0, MAX_DELAY)
        return min(MAX_DELAY, max(delay * SLOW_DOWN_FACTOR, asked))
    if status is not None:
        return max(base, delay / SLOW_DOWN_FACTOR)
    return delay


def raised_floor(base: float, crawl_delay: float) -> float:
    """A host's floor once its robots.txt asked for ``crawl_delay``: the larger of the
    two, at most MAX_DELAY."""
    return min(MAX_DELAY, max(base, crawl_delay))


@dataclass
class _Host:
    base: float  # --delay or the largest Crawl-delay, whichever is larger
    delay: float  # the base, or more after 429/503
    ready_at: float = 0.0  # table-clock time the next request may start
    holder: str | None = None
    lease_until: float = 0.0
    waiting: dict[str, float] = field(default_factory=dict)  # holder -> expected back


class HostTable:
    """Every host's turn, delay and queue. Non-blocking; one per fleet (a Dask actor).

    Times are this table's own monotonic clock; callers only ever get durations.
    """

    def __init__(
        self,
        delay: float = DEFAULT_DELAY,
        *,
        quiet: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.default_delay = delay
        self._clock = clock
        self._hosts: dict[str, _Host] = {}
        self._lock = threading.Lock()
        self.granted = 0  # turns handed out, for the record
        self._pages = 0  # page requests answered, across the fleet
        self._quiet_until = clock() + quiet  # no turn before (a table started again)
        self._next_sweep = clock() + FORGET_EVERY

    @property
    def hosts(self) -> int:
        """Hosts the table keeps state for."""
        return len(self._hosts)

    def _host(self, host: str, now: float) -> _Host:
        if now >= self._next_sweep:
            self._forget(now)
        state = self._hosts.get(host)
        if state is None:
            state = _Host(self.default_delay, self.default_delay, ready_at=self._quiet_until)
            self._hosts[host] = state
        _tidy(state, now)
        return state

    def _forget(self, now: float) -> None:
        """Drop the hosts that have nothing to remember (see the module's docstring)."""
        self._next_sweep = now + FORGET_EVERY
        for name, state in list(self._hosts.items()):
            _tidy(state, now)
            if (
                state.holder is None
                and not state.waiting
                and now >= state.ready_at
                and state.delay == state.base == self.default_delay
            ):
                del self._hosts[name]

    def ask(self, host: str, holder: str, lease: float) -> float:
        """0 when ``holder`` now holds ``host``'s turn (for at most ``lease`` seconds);
        otherwise the seconds to wait before asking again."""
        with self._lock:
            now = self._clock()
            return self._ask(self._host(host, now), holder, lease, now)

    def hold(self, host: str, holder: str, lease: float) -> tuple[float, float, float]:
        """As :meth:`ask`, for a turn its holder may keep for several requests, keeping
        the delay between them itself (:class:`HostGate`): granted, ``(0, the host's
        delay, its floor)``; otherwise ``(the wait, 0, 0)``."""
        with self._lock:
            now = self._clock()
            state = self._host(host, now)
            wait = self._ask(state, holder, lease, now)
            return (0.0, state.delay, state.base) if wait <= 0 else (wait, 0.0, 0.0)

    def _ask(self, state: _Host, holder: str, lease: float, now: float) -> float:
        state.waiting.setdefault(holder, now)
        first = next(iter(state.waiting))
        if state.holder is None and now >= state.ready_at and first == holder:
            del state.waiting[holder]
            state.holder, state.lease_until = holder, now + lease
            self.granted += 1
            return 0.0
        if state.holder is not None:
            wait = max(MIN_POLL, min(state.delay, state.lease_until - now))
        else:
            wait = max(state.ready_at - now, 0.0) + (0.0 if first == holder else MIN_POLL)
        state.waiting[holder] = now + wait
        return wait

    def renew(self, host: str, holder: str, lease: float, pages: int = 0) -> str:
        """``holder`` keeps the turn it holds for ``lease`` seconds from now (:data:`KEPT`),
        unless another waits for the host (:data:`WANTED`: it should give the turn back)
        or the turn lapsed (:data:`LAPSED`); ``pages``: pages answered since it said last."""
        with self._lock:
            now = self._clock()
            self._pages += pages
            state = self._host(host, now)
            if state.holder != holder:
                return LAPSED
            if state.waiting:
                return WANTED
            state.lease_until = now + lease
            return KEPT

    def end(self, host: str, holder: str, delay: float, ready_in: float, pages: int = 0) -> None:
        """``holder`` gives back the turn it kept for several requests: the host's
        ``delay`` as it left it (never below its floor), the next request no sooner than
        ``ready_in`` seconds from now, and ``pages`` answered since it said last."""
        with self._lock:
            now = self._clock()
            self._pages += pages
            state = self._host(host, now)
            if state.holder == holder:
                state.holder = None
                state.delay = min(MAX_DELAY, max(state.base, delay))
            state.ready_at = max(state.ready_at, now + max(ready_in, 0.0))

    def done(
        self,
        host: str,
        holder: str,
        status: int | None = None,
        retry_after: float | None = None,
        page: bool = False,
    ) -> None:
        """``holder``'s request to ``host`` is over (its body closed, or it failed): the
        delay starts now. ``status`` is the answer (None: no answer at all); ``page``
        says the request was for one of the site's pages (counted when answered)."""
        with self._lock:
            now = self._clock()
            if page and status is not None:
                self._pages += 1
            state = self._host(host, now)
            if state.holder == holder:
                state.holder = None
            state.delay = delay_after(state.delay, state.base, status, retry_after)
            state.ready_at = max(state.ready_at, now + state.delay)

    def leave(self, host: str, holder: str) -> None:
        """``holder`` stops waiting for ``host`` (it gave up)."""
        with self._lock:
            self._host(host, self._clock()).waiting.pop(holder, None)

    def pages_fetched(self) -> int:
        """Page requests answered so far, every site and host together."""
        with self._lock:
            return self._pages

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """A robots.txt of ``host`` asked for this Crawl-delay: it becomes the floor when
        larger (capped at MAX_DELAY), for every site on the host."""
        if not crawl_delay:
            return
        with self._lock:
            state = self._host(host, self._clock())
            state.base = raised_floor(state.base, crawl_delay)
            state.delay = max(state.delay, state.base)

    def delay_for(self, host: str) -> float:
        """The current delay of ``host``."""
        with self._lock:
            return self._host(host, self._clock()).delay

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """``host`` said it is overloaded: double its delay, honour ``Retry-After``;
        returns the seconds until it may be asked again."""
        with self._lock:
            now = self._clock()
            return self._slow_down(self._host(host, now), now, retry_after)

    def _slow_down(self, state: _Host, now: float, retry_after: float | None) -> float:
        state.delay = delay_after(state.delay, state.base, 429, retry_after)
        state.ready_at = max(state.ready_at, now + state.delay)
        return state.ready_at - now


def _tidy(state: _Host, now: float) -> None:
    """Lapse an overdue lease and drop the waiters that stopped asking."""
    if state.holder is not None and now > state.lease_until:
        state.holder = None  # the lease lapsed: its holder is gone or stuck
        state.ready_at = max(state.ready_at, state.lease_until + state.delay)
    for waiter, back in list(state.waiting.items()):
        if now > back + STALE_AFTER:
            del state.waiting[waiter]
