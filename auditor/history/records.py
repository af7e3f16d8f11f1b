"""What history hands back about sites and runs, and how it writes instants."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["DEFAULT_RECHECK_DAYS", "RunRecord", "SiteRecord", "aware", "instant", "instant_text"]

#: Days after its latest run when a site is due again if that run suggested no interval.
DEFAULT_RECHECK_DAYS = 7.0


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

    ``due_at`` is when the site should be re-verified: the latest run's end plus
    its ``recheck_days``, or plus :data:`DEFAULT_RECHECK_DAYS` when it suggested none
    (``recheck_days`` then stays None, to show that no interval was suggested).
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
            due_at=last.finished_at + timedelta(days=days),
        )


def aware(value: datetime) -> datetime:
    """``value`` itself when it is aware; ValueError when it is naive (whose zone is unknown)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"history takes aware datetimes only, not {value!r}")
    return value


def instant_text(value: datetime) -> str:
    """An aware datetime as stored: UTC, always with microseconds, so text order is time order."""
    return aware(value).astimezone(UTC).isoformat(timespec="microseconds")


def instant(text: str) -> datetime:
    """A stored instant back as an aware UTC datetime."""
    return datetime.fromisoformat(text)
