"""What a fleet hands back besides results: a site that failed, and how far it got.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FAILURE_CODES", "FleetProgress", "SiteFailure"]

#: Why a site of a fleet has no result (``SiteFailure.code``).
FAILURE_CODES = frozenset(
    {
        "error",  # the audit raised: the detail names the exception
        "time-limit",  # the site's wall-clock bound was spent before it finished
        "hung",  # no answer from the worker long after the bound: abandoned
        "worker-lost",  # the worker running it died (more than once)
        "cancelled",  # the cluster dropped the task
        "unreachable",  # nothing of the site answered: refused, no name, no TLS, no answer
    }
)


@dataclass(frozen=True)
class SiteFailure:
    """A site of a fleet that has no result, and why. Nothing of it was saved: the
    site stays due, and the next ``reverify`` tries it again."""

    site: str
    code: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """One JSON Lines record of ``--json``: the site and ``failed``, no verdict."""
        return {
            "schema": 1,
            "site": self.site,
            "verdict": None,
            "failed": {"code": self.code, "detail": self.detail},
        }


@dataclass(frozen=True)
class FleetProgress:
    """Where a fleet stands (handed to ``on_progress`` whenever it changes)."""

    total: int
    done: int  # sites with a result or a failure
    failed: int
    in_flight: int
    slots: int  # sites that may be in flight at once
    elapsed: float  # seconds since the fleet started
    #: Pages the sites fetched so far, those in flight included: page requests (robots.txt
    #: and sitemaps apart) that a site answered, whatever the status, as the fleet's host
    #: table counted them when each ended (looked up at most every second or so).
    pages: int = 0
    #: Sites sent to the cluster so far (done, in flight, or waiting to be sent again):
    #: the rest of ``total`` was never started.
    sent: int = 0

    @property
    def eta(self) -> float | None:
        """Seconds until the last site is done, at the pace so far (None before the
        first site is done, and once the last is)."""
        if not self.done or self.done >= self.total:
            return None
        return self.elapsed / self.done * (self.total - self.done)
