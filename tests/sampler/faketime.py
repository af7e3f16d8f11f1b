"""An injected clock for the pacer: simulated waits, counted exactly, that cost no time.

Requests still go to real loopback servers; only the pauses between them are simulated,
so a Crawl-delay or a Retry-After can be asserted to the hundredth without waiting for it.
"""

from __future__ import annotations

from auditor.sampler import HostPacer


class FakeTime:
    """A clock that moves only when the pacer sleeps, and the record of those sleeps."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def pacer(self, delay: float) -> HostPacer:
        """A pacer of ``delay`` seconds on this clock."""
        return HostPacer(delay, clock=self.clock, sleep=self.sleep)
