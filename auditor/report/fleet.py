"""The fleet index: one row per site in the history, linking to each site's report.

One self-contained HTML file that stays usable at thousands of sites: counts by
verdict at the top, and a small inline script (no external asset, no network)
that sorts by any column, filters by verdict and trend, and searches sites as
you type. Without scripts the whole table still renders. Every value from the
web (a site, its label) reaches the page through jinja2's autoescape, and the
script reads them back from data attributes and text, never as markup.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor import __version__
from auditor.report.site import environment, site_slug
from auditor.scorer.result import VERDICTS

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["TRENDS", "fleet_rows", "fleet_savings", "verdict_counts", "write_fleet_index"]

#: How good each verdict is for scheduling, to tell a trend up from a trend down.
_RANK = {"trusted": 4, "partial": 3, "inconclusive": 2, "untrusted": 1, "no-lastmod": 1}
#: Trends, in the order the index sorts them (worst news first).
TRENDS = ("degrading", "first run", "steady", "improving")
#: Recent verdicts shown per site.
_TIMELINE = 6


def fleet_rows(history: History, slugs: dict[str, str]) -> list[dict[str, Any]]:
    """One row per site: verdict, last run, runs, trend and the report's folder; worst
    verdicts first (then by site)."""
    verdicts: dict[str, list[str]] = defaultdict(list)
    for run in history.runs():  # oldest first: one query for the whole fleet
        verdicts[run.site].append(run.verdict)
    savings = history.latest_savings()
    rows = []
    for record in history.sites():
        past = verdicts[record.origin]
        rows.append(
            {
                "site": record.origin,
                "verdict": record.last_verdict,
                "last_run": record.last_started_at.replace(microsecond=0).isoformat(),
                "runs": record.runs,
                "trend": _trend(past),
                "timeline": past[-_TIMELINE:],
                "report": f"{slugs[record.origin]}/index.html" if record.origin in slugs else None,
                "name": _label(record.origin, slugs.get(record.origin)),
                "savings": savings.get(record.origin),
            }
        )
    return sorted(rows, key=lambda r: (_RANK.get(r["verdict"], 0), r["site"]))


def fleet_savings(rows: list[dict[str, Any]]) -> dict[str, float] | None:
    """The fleet's fetches a day under the plans against a daily recrawl of every URL,
    and their expected freshness (weighted by URLs), over the sites that have figures."""
    figures = [r["savings"] for r in rows if r.get("savings") and r["savings"].get("urls")]
    if not figures:
        return None
    urls = sum(f["urls"] for f in figures)
    plan = sum(f["fetches_per_day"] for f in figures)
    uniform = sum(f["uniform_fetches_per_day"] for f in figures)
    return {
        "sites": len(figures),
        "fetches_per_day": plan,
        "uniform_fetches_per_day": uniform,
        "saved_share": 1 - plan / uniform if uniform else 0.0,
        "freshness": sum(f["freshness"] * f["urls"] for f in figures) / urls,
        "uniform_freshness": sum(f["uniform_freshness"] * f["urls"] for f in figures) / urls,
    }


def verdict_counts(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """Sites per verdict, the contract's verdicts first in their order, then any other."""
    counts = Counter(r["verdict"] for r in rows)
    known = [(v, counts.pop(v)) for v in VERDICTS if v in counts]
    return known + sorted(counts.items())


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
    rows = fleet_rows(history, slugs)
    trends = {r["trend"] for r in rows}
    html = (
        environment()
        .get_template("fleet.html")
        .render(
            rows=rows,
            counts=verdict_counts(rows),
            savings=fleet_savings(rows),
            trends=[t for t in TRENDS if t in trends],
            ranks=_RANK,
            trend_ranks={t: i for i, t in enumerate(TRENDS)},
            generated_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
            version=__version__,
        )
    )
    path = folder / "index.html"
    path.write_text(html, encoding="utf-8")
    return path
