"""The fleet index: one row per site in the history, linking to each site's report."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor import __version__
from auditor.report.site import environment, site_slug

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["fleet_rows", "write_fleet_index"]

#: How good each verdict is for scheduling, to tell a trend up from a trend down.
_RANK = {"trusted": 4, "partial": 3, "inconclusive": 2, "untrusted": 1, "no-lastmod": 1}


def fleet_rows(history: History, slugs: dict[str, str]) -> list[dict[str, Any]]:
    """One row per site: verdict, last run, runs, trend and the report's folder."""
    rows = []
    for record in history.sites():
        verdicts = [r.verdict for r in history.runs(record.origin)]
        rows.append(
            {
                "site": record.origin,
                "verdict": record.last_verdict,
                "last_run": record.last_started_at.replace(microsecond=0).isoformat(),
                "runs": record.runs,
                "trend": _trend(verdicts),
                "timeline": verdicts[-6:],
                "report": f"{slugs[record.origin]}/index.html" if record.origin in slugs else None,
                "name": _label(record.origin, slugs.get(record.origin)),
            }
        )
    return sorted(rows, key=lambda r: (_RANK.get(r["verdict"], 0), r["site"]))


def _label(origin: str, slug: str | None) -> str | None:
    """The report folder's name when it says more than the origin (as in the demo)."""
    return slug if slug and slug != site_slug(origin) else None


def _trend(verdicts: list[str]) -> str:
    if len(verdicts) < 2:
        return "first run"
    before, now = _RANK.get(verdicts[-2], 0), _RANK.get(verdicts[-1], 0)
    if now > before:
        return "improving"
    if now < before:
        return "degrading"
    return "steady"


def write_fleet_index(history: History, folder: Path, slugs: dict[str, str]) -> Path:
    """Write ``index.html`` listing every site; ``slugs`` maps site -> report folder."""
    folder.mkdir(parents=True, exist_ok=True)
    html = (
        environment()
        .get_template("fleet.html")
        .render(
            rows=fleet_rows(history, slugs),
            generated_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
            version=__version__,
        )
    )
    path = folder / "index.html"
    path.write_text(html, encoding="utf-8")
    return path
