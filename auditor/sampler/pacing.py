"""Politeness per host: one request at a time, a delay between them, slower after a 429/503.

The rule, as a polite crawler keeps it (Scrapy's AutoThrottle moves a slot's delay
the same way: up when the host struggles, back down after answers, never below the
configured floor):

- the *base* delay is the larger of ``--delay`` and the host's robots.txt Crawl-delay;
- a 429 or 503 doubles the host's delay (up to :data:`MAX_DELAY`) and its
  ``Retry-After`` is honoured: the host is not asked again before it;
- every other answer halves the delay back, never below the base;
- the host is given up for the rest of the run (:meth:`HostPacer.stopped`) when it
  asks for a ``Retry-After`` beyond :data:`MAX_DELAY` or answers 429/503
  :data:`OVERLOAD_LIMIT` times in a row: waiting longer than that for a sample is
  not kinder than leaving.

Touches: nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from auditor.sampler.defaults import DEFAULT_DELAY  # here too, as it always was

__all__ = [
    "DEFAULT_DELAY",
    "MAX_DELAY",
    "OVERLOAD_LIMIT",
    "PAGE_ALLOWANCE",
    "HostPacer",
    "sampling_budget",
]

#: The longest wait between two requests to one host. A host that asks for more (a
#: larger ``Retry-After``) is given up for the run: leaving is kinder than holding on.
MAX_DELAY = 60.0
#: Each 429/503 doubles the host's delay; each other answer halves it back.
SLOW_DOWN_FACTOR = 2.0
#: 429/503 answers in a row after which a host is given up for the run.
OVERLOAD_LIMIT = 3
#: Seconds allowed per sampled page for its answer, in the sampling time budget.
PAGE_ALLOWANCE = 5.0


def sampling_budget(pages: int, delay: float) -> float:
    """Seconds a run may spend fetching ``pages`` pages of one host ``delay`` apart:
    twice the planned delay per page (room to back off) plus :data:`PAGE_ALLOWANCE`."""
    return pages * (SLOW_DOWN_FACTOR * delay + PAGE_ALLOWANCE)


_log = logging.getLogger(__name__)


@dataclass
class _HostState:
    base: float  # the floor: --delay or Crawl-delay, whichever is larger
    delay: float
    ready_at: float = 0.0  # clock time the next request may start
    overloads: int = 0  # 429/503 answers in a row
    stopped: str | None = None  # why the host is no longer asked, for this run


class HostPacer:
    """Spaces requests per host: at least ``delay`` seconds from the end of one to the
    start of the next (the larger of ``--delay`` and the host's Crawl-delay), more
    after the host said it was overloaded, and none at all once it kept saying so."""

    def __init__(
        self,
        delay: float = DEFAULT_DELAY,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.default_delay = delay
        self._clock = clock
        self._sleep = sleep
        self._hosts: dict[str, _HostState] = {}
        self.waited = 0.0  # seconds spent waiting, for the record

    def _state(self, host: str) -> _HostState:
        if host not in self._hosts:
            self._hosts[host] = _HostState(self.default_delay, self.default_delay)
        return self._hosts[host]

    def now(self) -> float:
        """The pacer's clock (monotonic seconds unless a clock was injected)."""
        return self._clock()

    def delay_for(self, host: str) -> float:
        """The current delay for ``host``."""
        return self._state(host).delay

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """Use robots.txt's Crawl-delay as the floor when it is larger than ours
        (capped at MAX_DELAY)."""
        if crawl_delay:
            state = self._state(host)
            state.base = min(MAX_DELAY, max(state.base, crawl_delay))
            state.delay = max(state.delay, state.base)
            _log.info("Crawl-delay %g s for %s: delay now %g s", crawl_delay, host, state.delay)

    def next_turn(self, host: str) -> float:
        """Clock time at which ``host`` may be asked again (now, if it may already)."""
        return max(self._state(host).ready_at, self._clock())

    def wait_turn(self, host: str) -> None:
        """Sleep until ``host`` may be asked again."""
        pause = self._state(host).ready_at - self._clock()
        if pause > 0:
            _log.debug("waiting %.3g s before asking %s again", pause, host)
            self.waited += pause
            self._sleep(pause)

    def finished(self, host: str) -> None:
        """A request to ``host`` just ended: the delay starts now (a pushed-back turn
        stays pushed back)."""
        state = self._state(host)
        state.ready_at = max(state.ready_at, self._clock() + state.delay)

    def answered(self, host: str) -> None:
        """``host`` gave an answer other than 429/503: its delay steps back down."""
        state = self._state(host)
        state.overloads = 0
        state.delay = max(state.base, state.delay / SLOW_DOWN_FACTOR)

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """``host`` answered 429 or 503: double its delay and push its next turn back
        to honour ``Retry-After``; give the host up when it asks for more than
        MAX_DELAY or keeps answering so.

        Returns the seconds until the host may be asked again.
        """
        state = self._state(host)
        state.overloads += 1
        asked = retry_after or 0.0
        if asked > MAX_DELAY:
            state.stopped = (
                f"the host asked to wait {asked:.0f} s (Retry-After), "
                f"more than the {MAX_DELAY:.0f} s cap"
            )
        elif state.overloads >= OVERLOAD_LIMIT:
            state.stopped = f"the host answered 429/503 {state.overloads} times in a row"
        state.delay = min(MAX_DELAY, max(state.delay * SLOW_DOWN_FACTOR, asked))
        state.ready_at = self._clock() + state.delay
        _log.info(
            "%s said it is overloaded (Retry-After %s): delay now %g s%s",
            host,
            "none" if retry_after is None else f"{retry_after:g} s",
            state.delay,
            f"; given up: {state.stopped}" if state.stopped else "",
        )
        return state.delay

    def stopped(self, host: str) -> str | None:
        """Why ``host`` is no longer asked for this run, or None while it may be."""
        return self._state(host).stopped
