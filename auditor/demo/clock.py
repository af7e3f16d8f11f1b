"""A simulated clock: real time from a chosen start, moved on by days when told.

The demo audits each site twice; on a simulated clock the two runs are days apart in
the history (as a real site's re-verification would be), so change rates and
re-verification intervals read as a real site's would, while the demo takes seconds.

Touches: nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["SimulatedClock"]


class SimulatedClock:
    """What time it is in a simulation: real time elapses, :meth:`advance` jumps ahead.

    Pass :meth:`now` as the audit's clock (``AuditOptions.clock``) and the site server's,
    so the site and the audit agree on the time.
    """

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("a simulated clock starts at an aware datetime")
        self._offset = start - datetime.now(UTC)

    def now(self) -> datetime:
        """The simulated time now (aware, UTC)."""
        return datetime.now(UTC) + self._offset

    def advance(self, delta: timedelta) -> None:
        """Jump ahead by ``delta``."""
        self._offset += delta
