"""The server's records as JSON: a fleet row, a run. Instants are ISO 8601 in UTC, to the
second.

Touches: nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auditor.history.records import RunRecord
    from auditor.serve.fleet import SiteRow

__all__ = ["instant", "run_json", "segment_json", "site_json"]


def instant(moment: datetime | None) -> str | None:
    """``moment`` as ISO 8601 to the second (None stays None)."""
    return None if moment is None else moment.replace(microsecond=0).isoformat()


def site_json(row: SiteRow) -> dict[str, Any]:
    """A fleet row as JSON."""
    return {
        "site": row.site,
        "slug": row.slug,
        "verdict": row.verdict,
        "since": instant(row.since),
        "previous": row.previous,
        "degraded": row.degraded,
        "runs": row.runs,
        "last_run": instant(row.last_run),
        "due": instant(row.due),
        "saved_per_day": row.saved_per_day,
    }


def run_json(run: RunRecord) -> dict[str, Any]:
    """A run as JSON."""
    return {
        "run_id": run.run_id,
        "started_at": instant(run.started_at),
        "finished_at": instant(run.finished_at),
        "verdict": run.verdict,
        "recheck_days": run.recheck_days,
    }


def segment_json(segment: dict[str, Any]) -> dict[str, Any]:
    """A segment of the site page as JSON: its instants as text."""
    return {k: instant(v) if isinstance(v, datetime) else v for k, v in segment.items()}
