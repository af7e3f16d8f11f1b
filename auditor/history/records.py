"""What history hands back about sites and runs, and how it writes instants.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = [
    "DEFAULT_RECHECK_DAYS",
    "DUE_TOLERANCE",
    "DUE_TOLERANCE_SHARE",
    "RunRecord",
    "SiteRecord",
    "aware",
    "due_tolerance",
    "instant",
    "instant_text",
]

#: Days after its latest run's start when a site is due again if that run suggested no
#: interval.
DEFAULT_RECHECK_DAYS = 7.0
#: The most a site is taken ahead of its ``due_at`` (``History.due_sites``): half a day,
#: half the period of a daily cron, which then takes each site at its run nearest the due
#: instant. A site audited hours after the cron started (by a night's fleet, up to about
#: 12 hours) or by a cron that fired a little early or late is due again at that hour a
#: whole number of days on: less than 12 hours after that day's cron, which takes it.
DUE_TOLERANCE = timedelta(hours=12)
#: ... and at most this share of the site's interval, so the tolerance never shortens an
#: interval by more than a quarter: a 1-day site is taken 6 hours early at most, so a second
#: run less than 18 hours after the one that audited it does not audit it again.
DUE_TOLERANCE_SHARE = 0.25


@dataclass(frozen=True)
class RunRecord:
    """One finished audit run, as listed by ``auditor history``."""

    run_id: int
    site: str
    started_at: datetime
    finished_at: datetime
    verdict: str
    recheck_days: float | None = None


@dataclass(frozen=True)
class SiteRecord:
    """One audited site and its latest run.

    ``due_at`` is when the site should be re-verified: the latest run's *start* plus its
    ``recheck_days``, or plus :data:`DEFAULT_RECHECK_DAYS` when it suggested none
    (``recheck_days`` then stays None, to show that no interval was suggested). From the
    start, not the end: runs from a cron start at the cron's hour, so the next one is due
    at that hour too, however long the audit (or the fleet before it) took. A site counts
    as due a little earlier than ``due_at``: see :meth:`is_due`.
    """

    origin: str
    runs: int
    last_run_id: int
    last_started_at: datetime
    last_finished_at: datetime
    last_verdict: str
    recheck_days: float | None
    due_at: datetime

    @classmethod
    def of(cls, origin: str, runs: int, last: RunRecord) -> SiteRecord:
        """The record of a site from its number of runs and its latest run."""
        days = DEFAULT_RECHECK_DAYS if last.recheck_days is None else last.recheck_days
        return cls(
            origin=origin,
            runs=runs,
            last_run_id=last.run_id,
            last_started_at=last.started_at,
            last_finished_at=last.finished_at,
            last_verdict=last.verdict,
            recheck_days=last.recheck_days,
            due_at=last.started_at + timedelta(days=days),
        )

    @property
    def tolerance(self) -> timedelta:
        """How long before ``due_at`` the site counts as due: :func:`due_tolerance`."""
        return due_tolerance(
            DEFAULT_RECHECK_DAYS if self.recheck_days is None else self.recheck_days
        )

    def is_due(self, now: datetime) -> bool:
        """Whether the site is due at ``now`` (aware): ``due_at <= now + tolerance``."""
        return self.due_at <= aware(now) + self.tolerance


def due_tolerance(recheck_days: float) -> timedelta:
    """How long before it is due a site re-verified every ``recheck_days`` counts as due:
    :data:`DUE_TOLERANCE_SHARE` of the interval, at most :data:`DUE_TOLERANCE` (12 hours
    from a 2-day interval on, 6 hours for a 1-day one; none for an interval of 0)."""
    return min(DUE_TOLERANCE, timedelta(days=max(0.0, recheck_days) * DUE_TOLERANCE_SHARE))


def aware(value: datetime) -> datetime:
    """``value`` itself when it is aware; ValueError when it is naive (whose zone is unknown)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"history takes aware datetimes only, not {value!r}")
    return value


def instant_text(value: datetime) -> str:
    """An aware datetime as stored: UTC, always with microseconds, so text order is time order."""
    if value.tzinfo is UTC:  # most are: a million-line crawl log writes four a line
        return value.isoformat(timespec="microseconds")
    return aware(value).astimezone(UTC).isoformat(timespec="microseconds")


def instant(text: str) -> datetime:
    """A stored instant back as an aware UTC datetime."""
    return datetime.fromisoformat(text)
