"""Politeness per host: one request at a time, a delay between them, slower after a 429/503."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DEFAULT_DELAY", "MAX_DELAY", "HostPacer"]

#: Seconds between two requests to one host unless robots.txt asks for more.
DEFAULT_DELAY = 1.0
#: A host that keeps answering 429/503 is never waited on longer than this between
#: requests: past it, giving up on the remaining pages is kinder than holding on.
MAX_DELAY = 60.0
#: Each 429/503 at least doubles the host's delay.
SLOW_DOWN_FACTOR = 2.0

_log = logging.getLogger(__name__)


@dataclass
class _HostState:
    delay: float
    ready_at: float = 0.0  # monotonic time the next request may start


class HostPacer:
    """Spaces requests per host: at least ``delay`` seconds from the end of one to the
    start of the next (the larger of ``--delay`` and the host's Crawl-delay), and more
    after the host said it was overloaded."""

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
            self._hosts[host] = _HostState(self.default_delay)
        return self._hosts[host]

    def delay_for(self, host: str) -> float:
        """The current delay for ``host``."""
        return self._state(host).delay

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """Use robots.txt's Crawl-delay when it is larger than ours (capped at MAX_DELAY)."""
        if crawl_delay:
            state = self._state(host)
            state.delay = min(MAX_DELAY, max(state.delay, crawl_delay))
            _log.info("Crawl-delay %g s for %s: delay now %g s", crawl_delay, host, state.delay)

    def wait_turn(self, host: str) -> None:
        """Sleep until ``host`` may be asked again."""
        pause = self._state(host).ready_at - self._clock()
        if pause > 0:
            _log.debug("waiting %.3g s before asking %s again", pause, host)
            self.waited += pause
            self._sleep(pause)

    def finished(self, host: str) -> None:
        """A request to ``host`` just ended: the delay starts now."""
        state = self._state(host)
        state.ready_at = self._clock() + state.delay

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """``host`` answered 429 or 503: raise its delay and push its next turn back.

        Returns the seconds until the host may be asked again.
        """
        state = self._state(host)
        state.delay = min(MAX_DELAY, max(state.delay * SLOW_DOWN_FACTOR, retry_after or 0.0))
        pause = min(MAX_DELAY, max(state.delay, retry_after or 0.0))
        state.ready_at = self._clock() + pause
        _log.info(
            "%s said it is overloaded (Retry-After %s): delay now %g s, next request in %g s",
            host,
            "none" if retry_after is None else f"{retry_after:g} s",
            state.delay,
            pause,
        )
        return pause
