"""The host gate: politeness per host name across every site of a fleet, wherever it runs.

The rule (docs/fleets.md): per host *name*, all its ports and
schemes together, one request at a time, and at least the host's delay from the
end of one request to the start of the next, whichever site, process or Dask
worker asks. The delay is the larger of ``--delay`` and every Crawl-delay its
sites' robots.txt asked for; a 429/503 doubles it (honouring ``Retry-After``) and
every other answer halves it back, as the per-site pacer does
(:mod:`auditor.sampler.pacing`).

Design, and why:

- **One table, one owner.** :class:`HostTable` holds every host's state (who
  holds its turn, when the next may start, its delay) and never blocks: asked
  for a turn it grants it or says how long to wait before asking again. Fleet
  workers are separate processes (often on other machines), so there is exactly
  one table per fleet and it lives in one place: a Dask *actor*, an object
  pinned to one worker whose methods run there one call at a time. Actors are
  Dask's own answer to shared mutable state; every worker can reach every other
  worker (Dask needs that anyway), while the process owning the history may not
  be reachable from the cluster. A lock (``distributed.Lock``) per host plus a
  shared variable for its times would need two round trips per request and
  could not see "turn held, holder gone"; a coordinator of our own would be one
  more server to run and secure.
- **Called over a line of its own.** A Dask actor call costs about 2.2 ms of
  CPU, and a site makes two a request; so the actor also serves the table on a
  socket of its own, keyed, on its worker's interface, and sites call it there
  for about 0.34 ms (:mod:`auditor.fleet.channel`). A worker that cannot reach
  that socket calls through the actor.
- **Waiting happens at the caller.** :class:`HostGate` (the client side, the
  same interface as :class:`~auditor.sampler.pacing.HostPacer`) sleeps where it
  runs for as long as the table says, then asks again. The table's answer is
  exact when the host is free (its next start); while the host is busy it says
  "one delay": the turn cannot start earlier than a delay after the busy request
  ends, so asking again then never oversleeps the turn. A request costs two or
  three calls to the table, not a stream of polls.
- **Fair, and safe against the dead.** Waiters are served in the order they
  first asked; a waiter that stops asking (its site was cancelled, its worker
  died) drops out of the queue after :data:`STALE_AFTER` seconds of silence, and
  a turn is a lease: held longer than the request's own deadline allows, it
  lapses (and the delay still counts from its end). A lost worker cannot block a
  host for more than one request's deadline.
- **A lapsed turn is never used.** A holder held up between its turn and its request
  (its process stopped, starved, or swapped out for longer than the lease) may find
  that the table gave the host to another meanwhile; the table cannot stop a request
  it never sees, so the holder checks (:meth:`HostGate.holds`), by its own clock,
  counting the lease from when it *asked* (never later than the table's grant): a turn
  that would lapse before the request's deadline is given back and taken again. It
  checks twice: before the request is started, and again with its connection made,
  right before the first byte goes out (a process stopped while connecting, found
  under load, would otherwise send on a lapsed turn). What is left is the instant of
  writing the request's head; and a request under way when its process stopped (the
  server answering it meanwhile) is over for the server long before the lease.
- **Clocks stay local.** The table measures time with its own monotonic clock
  and hands out durations, never instants, so machines need not agree on the
  time.
- **It counts the pages.** Every request of every site ends at the table, so
  the table also counts the pages fetched across the fleet (a page request the
  site answered, whatever the status; robots.txt and sitemaps are not pages):
  the fleet's progress reads it while sites are still in flight, at no cost of
  its own (the count rides on the call that ends a turn).
- **Forgetful, within reason.** A host whose delay has passed, with no turn held,
  nobody waiting and nothing learnt (no Crawl-delay, no back-off) is dropped: a
  fleet of 10,000 sites does not keep 10,000 hosts in the table, and asking
  again starts from the same defaults.
- **A table lost is started again, cautiously.** If the worker holding the actor
  dies, the fleet starts a new table (:mod:`auditor.fleet.engine`); the new one
  cannot know which turns the lost one had granted, so it grants none for
  ``quiet`` seconds (a turn's lease and the delay): every request started under
  the lost table is over by then. Calls to a table that cannot be reached raise
  :class:`GateLost`.

Without Dask (tests, a single process), the same table is used directly, behind
a lock.

Touches: nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from auditor.errors import AuditorError
from auditor.sampler.pacing import DEFAULT_DELAY, MAX_DELAY, SLOW_DOWN_FACTOR

__all__ = [
    "FORGET_EVERY",
    "MIN_POLL",
    "STALE_AFTER",
    "GateLost",
    "GateTable",
    "HostGate",
    "HostTable",
    "host_of",
]

#: The shortest wait the table hands out while another request holds the host
#: (with a zero delay, how often a waiter asks again).
MIN_POLL = 0.02
#: A waiter that has not come back this long after it was told to is dropped.
STALE_AFTER = 2.0
#: Seconds between two looks for hosts the table may forget.
FORGET_EVERY = 30.0
_OVERLOADED = frozenset({429, 503})


class GateLost(AuditorError):
    """The fleet's host table cannot be reached (the worker holding it died, or it did
    not answer in time): the site cannot go on politely."""


def host_of(url: str) -> str:
    """The host name a URL's request counts against (ports and scheme apart; every
    spelling of one host as one: :func:`auditor.http.hosts.host_key`)."""
    from urllib.parse import urlsplit

    from auditor.http.hosts import host_key

    return host_key(urlsplit(url).hostname or "")


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
            state = self._host(host, now)
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
            if status in _OVERLOADED:
                self._slow_down(state, now, retry_after)
            elif status is not None:
                state.delay = max(state.base, state.delay / SLOW_DOWN_FACTOR)
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
            state.base = min(MAX_DELAY, max(state.base, crawl_delay))
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
        asked = min(retry_after or 0.0, MAX_DELAY)
        state.delay = min(MAX_DELAY, max(state.delay * SLOW_DOWN_FACTOR, asked))
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


class GateTable(Protocol):
    """What :class:`HostGate` needs of a table: a :class:`HostTable`, or a proxy of one
    living in a Dask actor (:class:`auditor.fleet.cluster.ActorTable`)."""

    def ask(self, host: str, holder: str, lease: float) -> float: ...
    def done(
        self,
        host: str,
        holder: str,
        status: int | None = ...,
        retry_after: float | None = ...,
        page: bool = ...,
    ) -> None: ...
    def leave(self, host: str, holder: str) -> None: ...
    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None: ...
    def delay_for(self, host: str) -> float: ...
    def slow_down(self, host: str, retry_after: float | None) -> float: ...


class HostGate:
    """One site's side of the fleet's table: the HostPacer interface, shared by all.

    ``wait_turn`` blocks until the host's turn is this holder's; ``finished`` ends it.
    ``lease`` bounds how long a turn may be held (the request's deadline and a margin).
    """

    def __init__(
        self,
        table: GateTable,
        holder: str,
        *,
        lease: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.table = table
        self.holder = holder
        self.lease = lease
        self._clock = clock
        self._sleep = sleep
        self.waited = 0.0  # seconds spent waiting for turns, for the record
        self.taken_again = 0  # turns found lapsed before their request, taken again
        self._asked: dict[str, float] = {}  # host -> when the turn held was asked for

    def wait_turn(self, host: str, until: float | None = None) -> bool:
        """Sleep until ``host`` is ours; False (having waited no later than ``until``, a
        time on this gate's clock) when the turn would come after it."""
        while True:
            asked = self._clock()
            wait = self.table.ask(host, self.holder, self.lease)
            if wait <= 0:
                self._asked[host] = asked
                return True
            if until is not None and self._clock() + wait > until:
                self.table.leave(host, self.holder)
                return False
            self.waited += wait
            self._sleep(wait)

    def finished(
        self,
        host: str,
        status: int | None = None,
        retry_after: float | None = None,
        *,
        page: bool = False,
    ) -> None:
        """The request to ``host`` is over; ``status`` is how it was answered; ``page``:
        it was for one of the site's pages (the table counts those)."""
        self._asked.pop(host, None)
        self.table.done(host, self.holder, status, retry_after, page)

    def holds(self, host: str, seconds: float) -> bool:
        """True when the turn of ``host`` this gate took lasts ``seconds`` more: its
        lease counted from when it was asked for (the table granted it no earlier), so
        a request that ends within ``seconds`` ends within the lease."""
        asked = self._asked.get(host)
        return asked is not None and self._clock() + seconds <= asked + self.lease

    def take_again(self, host: str, until: float | None = None) -> bool:
        """Give back a turn of ``host`` that would lapse too soon (unused: the delay
        counts from now) and wait for a new one, as :meth:`wait_turn`."""
        self.taken_again += 1
        self.finished(host)
        return self.wait_turn(host, until)

    def delay_for(self, host: str) -> float:
        """The host's current delay, as the whole fleet keeps it."""
        return self.table.delay_for(host)

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """Make a Crawl-delay the host's floor for every site on it."""
        self.table.honour_crawl_delay(host, crawl_delay)

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """The host is overloaded: slow every site on it down."""
        return self.table.slow_down(host, retry_after)
