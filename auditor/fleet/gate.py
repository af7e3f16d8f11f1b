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
  CPU; so the actor also serves the table on a socket of its own, keyed, on its
  worker's interface, and sites call it there for about 0.34 ms
  (:mod:`auditor.fleet.channel`). A worker that cannot reach that socket calls
  through the actor.
- **A site keeps its host's turn.** A site's requests nearly all go to its own host,
  one after another; asking the table before and after each (two calls a request,
  44 a demo site, each waking a thread of the table's busy worker) cost about 10 ms
  of a site's CPU. So a turn, once granted (:meth:`HostTable.hold`), is kept by the
  site's :class:`HostGate` for its next requests to the host, which keeps the
  host's delay (and its back-off on 429/503, as the table would) between them on
  its own clock, the same rule as the table's. It gives the turn back
  (:meth:`HostTable.end`: the delay as left, when the next request may start, the
  pages fetched) when the site is over, when it moves on to another host, or when
  it hears someone else waits for the host: it asks the table once it has kept the
  turn :data:`CHECK_EVERY` seconds (:meth:`HostTable.renew`, which also renews the
  lease). Nothing else may use a host while its turn is kept, so the rule holds as
  it did; a site on a host of its own asks the table twice in all. What it costs: a
  site waiting for a host another site keeps in use waits up to :data:`CHECK_EVERY`
  and a delay (then the two take turns, in the order they asked), rather than one
  delay.
- **Waiting happens at the caller.** :class:`HostGate` (the client side, the
  same interface as :class:`~auditor.sampler.pacing.HostPacer`) sleeps where it
  runs for as long as the table says, then asks again. The table's answer is
  exact when the host is free (its next start); while the host is busy it says
  "one delay": the turn cannot start earlier than a delay after the busy request
  ends, so asking again then never oversleeps the turn. A turn costs two or three
  calls to the table, not a stream of polls.
- **Fair, and safe against the dead.** Waiters are served in the order they
  first asked; a waiter that stops asking (its site was cancelled, its worker
  died) drops out of the queue after :data:`STALE_AFTER` seconds of silence, and
  a turn is a lease: held longer than the request's own deadline allows, it
  lapses (and the delay still counts from its end). A lost worker cannot block a
  host for more than one lease: a request's deadline and a margin (a turn kept
  across requests included: unrenewed, it lapses as one request's would).
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
- **It counts the pages.** Every turn of every site ends at the table, so the
  table also counts the pages fetched across the fleet (a page request the site
  answered, whatever the status; robots.txt and sitemaps are not pages): the
  fleet's progress reads it while sites are still in flight, at no cost of its
  own (the count rides on the calls that renew and end a turn: it lags a site's
  kept turn, at most :data:`CHECK_EVERY` seconds of it).
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

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from auditor.errors import AuditorError
from auditor.fleet.table import (
    CHECK_EVERY,
    FORGET_EVERY,
    KEPT,
    LAPSED,
    MIN_POLL,
    STALE_AFTER,
    WANTED,
    HostTable,
    delay_after,
    raised_floor,
)

__all__ = [
    "CHECK_EVERY",
    "FORGET_EVERY",
    "KEPT",
    "LAPSED",
    "MIN_POLL",
    "STALE_AFTER",
    "WANTED",
    "GateLost",
    "GateTable",
    "HostGate",
    "HostTable",
    "host_of",
]


class GateLost(AuditorError):
    """The fleet's host table cannot be reached (the worker holding it died, or it did
    not answer in time): the site cannot go on politely."""


def host_of(url: str) -> str:
    """The host name a URL's request counts against (ports and scheme apart; every
    spelling of one host as one: :func:`auditor.http.hosts.host_key`)."""
    from urllib.parse import urlsplit

    from auditor.http.hosts import host_key

    return host_key(urlsplit(url).hostname or "")


class GateTable(Protocol):
    """What :class:`HostGate` needs of a table: a :class:`HostTable`, or a proxy of one
    living in a Dask actor (:class:`auditor.fleet.cluster.ActorTable`)."""

    def ask(self, host: str, holder: str, lease: float) -> float: ...
    def hold(self, host: str, holder: str, lease: float) -> tuple[float, float, float]: ...
    def renew(self, host: str, holder: str, lease: float, pages: int = ...) -> str: ...
    def end(
        self, host: str, holder: str, delay: float, ready_in: float, pages: int = ...
    ) -> None: ...
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


@dataclass
class _Kept:
    """A host's turn a :class:`HostGate` keeps across requests, on the gate's clock."""

    asked: float  # when the turn (or its last renewal) was asked for: its lease counts from it
    delay: float  # the host's delay, kept here while the turn is
    base: float  # its floor (--delay, Crawl-delay)
    ready: float  # the next request may start
    pages: int = 0  # pages answered, not told to the table yet
    busy: bool = False  # a request is under way
    ended: float = float("-inf")  # when the last request ended

    def answered(self, now: float, status: int | None, retry_after: float | None) -> None:
        """A request ended ``now``: the delay counts from it, slowed down or eased back
        as the table would (:meth:`HostTable.done`)."""
        self.delay = delay_after(self.delay, self.base, status, retry_after)
        self.ended = now
        self.ready = max(self.ready, now + self.delay)


class HostGate:
    """One site's side of the fleet's table: the HostPacer interface, shared by all.

    ``wait_turn`` blocks until the host's turn is this holder's; ``finished`` ends its
    request. The turn is kept for the site's next requests to the host, the delay
    between them kept here, until the site moves on to another host, someone else waits
    for it (heard every ``check_every`` seconds), or :meth:`let_go`: a site on a host of
    its own asks the table twice, not twice a request. ``lease`` bounds how long a turn
    may be held without a word to the table (a request's deadline and a margin).
    """

    def __init__(
        self,
        table: GateTable,
        holder: str,
        *,
        lease: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        check_every: float = CHECK_EVERY,
    ) -> None:
        self.table = table
        self.holder = holder
        self.lease = lease
        self._clock = clock
        self._sleep = sleep
        self._check_every = check_every
        self.waited = 0.0  # seconds spent waiting for turns, for the record
        self.taken_again = 0  # turns found lapsed before their request, taken again
        self.handed_over = 0  # turns given back because another site waited
        self._kept: dict[str, _Kept] = {}  # host -> the turn kept

    def wait_turn(self, host: str, until: float | None = None) -> bool:
        """Sleep until ``host`` is ours and its delay is over; False (having waited no
        later than ``until``, a time on this gate's clock) when the turn would come after
        it."""
        self._let_go_of_others(host)
        kept = self._kept.get(host)
        if kept is not None:
            if until is not None and kept.ready > until:
                self._give_back(host)
                return False
            self._pause(kept.ready - self._clock())
            if self._still_ours(host, kept):
                kept.busy = True
                return True
        return self._ask(host, until)

    def _ask(self, host: str, until: float | None) -> bool:
        while True:
            asked = self._clock()
            wait, delay, base = self.table.hold(host, self.holder, self.lease)
            if wait <= 0:
                self._kept[host] = _Kept(asked, delay, base, asked, busy=True)
                return True
            if until is not None and self._clock() + wait > until:
                self.table.leave(host, self.holder)
                return False
            self._pause(wait)

    def _pause(self, seconds: float) -> None:
        if seconds > 0:
            self.waited += seconds
            self._sleep(seconds)

    def _still_ours(self, host: str, kept: _Kept) -> bool:
        """True when the kept turn goes on: kept for less than ``check_every``, or
        renewed; otherwise it is given back (another waits, or it lapsed)."""
        asked = self._clock()
        if asked - kept.asked < self._check_every:
            return True
        answer = self.table.renew(host, self.holder, self.lease, kept.pages)
        kept.pages = 0
        if answer == KEPT:
            kept.asked = asked
            return True
        self.handed_over += answer == WANTED
        self._give_back(host)
        return False

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
        kept = self._kept.get(host)
        if kept is None:  # not a turn of ours (any more): the table hears of it at once
            self.table.done(host, self.holder, status, retry_after, page)
            return
        kept.busy = False
        kept.pages += page and status is not None
        kept.answered(self._clock(), status, retry_after)

    def let_go(self) -> None:
        """Give back every turn kept (the site is over)."""
        for host in list(self._kept):
            self._give_back(host)

    def _let_go_of_others(self, host: str) -> None:
        """Give back the turns kept of other hosts, but those with a request under way:
        a site moving on from a host leaves it to the others."""
        for other, kept in list(self._kept.items()):
            if other != host and not kept.busy:
                self._give_back(other)

    def _give_back(self, host: str) -> None:
        kept = self._kept.pop(host)
        ready_in = kept.ready - self._clock()
        self.table.end(host, self.holder, kept.delay, ready_in, kept.pages)

    def holds(self, host: str, seconds: float) -> bool:
        """True when the turn of ``host`` this gate took lasts ``seconds`` more: its
        lease counted from when it was asked for (the table granted it no earlier), so
        a request that ends within ``seconds`` ends within the lease."""
        kept = self._kept.get(host)
        return kept is not None and self._clock() + seconds <= kept.asked + self.lease

    def take_again(self, host: str, until: float | None = None) -> bool:
        """Give back a turn of ``host`` that would lapse too soon (unused: the delay
        counts from now) and wait for a new one, as :meth:`wait_turn`."""
        self.taken_again += 1
        self.finished(host)
        if host in self._kept:
            self._give_back(host)
        return self._ask(host, until)

    def delay_for(self, host: str) -> float:
        """The host's current delay, as the whole fleet keeps it (this gate, while it
        keeps the host's turn)."""
        kept = self._kept.get(host)
        return kept.delay if kept is not None else self.table.delay_for(host)

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """Make a Crawl-delay the host's floor for every site on it."""
        if not crawl_delay:
            return
        self.table.honour_crawl_delay(host, crawl_delay)
        kept = self._kept.get(host)
        if kept is not None:  # from the end of the request before, as any delay
            kept.base = raised_floor(kept.base, crawl_delay)
            kept.delay = max(kept.delay, kept.base)
            kept.ready = max(kept.ready, kept.ended + kept.delay)

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """The host is overloaded: slow every site on it down."""
        kept = self._kept.get(host)
        if kept is None:
            return self.table.slow_down(host, retry_after)
        now = self._clock()
        kept.answered(now, 429, retry_after)
        return kept.ready - now
