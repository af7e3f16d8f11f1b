"""The fleet index: one row per site in the history, linking to each site's report.

Self-contained HTML that stays usable at 100,000 sites: pages of :data:`PAGE_ROWS`
sites (``index.html``, ``index-2.html``...; one order, worst verdicts first, every page
linked from each), the whole fleet's counts by verdict at the top of each, and a small
inline script (no external asset, no network) that sorts a page by any column, filters it
by verdict and trend, and searches it as you type. Without scripts each page's whole
table still renders. Every value from the web (a site, its label) reaches the page
through jinja2's autoescape, and the script reads them back from data attributes and
text, never as markup.

Touches: the database, the disk.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from auditor import __version__
from auditor.report.site import environment, site_slug
from auditor.scorer.result import VERDICTS

if TYPE_CHECKING:
    from auditor.history import History

__all__ = [
    "NOT_DRAWN_PAGE",
    "PAGE_ROWS",
    "TRENDS",
    "VERDICT_RANK",
    "fleet_rows",
    "fleet_savings",
    "page_name",
    "verdict_counts",
    "write_fleet_index",
]

#: How good each verdict is for scheduling, to tell a trend up from a trend down (an
#: unknown verdict ranks 0, below all): the index and ``auditor serve`` sort worst first.
VERDICT_RANK = {"trusted": 4, "partial": 3, "inconclusive": 2, "untrusted": 1, "no-lastmod": 1}
_RANK = VERDICT_RANK
#: Trends, in the order the index sorts them (worst news first).
TRENDS = ("degrading", "first run", "steady", "improving")
#: Recent verdicts shown per site.
_TIMELINE = 6
#: Sites a page of the index lists. Measured in headless Chromium on this 2-core machine
#: under a load of 13 to 17: a 100,000-row file (63 MB) had not loaded after 120 s, 10,000
#: rows took 6 to 11 s, 2,000 rows 2.0 to 2.6 s, 1,000 rows (640 KB) 1.5 s once warm.
PAGE_ROWS = 1_000
#: The page an index links for a site whose report is not drawn yet.
NOT_DRAWN_PAGE = "not-drawn.html"


def fleet_rows(history: History, slugs: dict[str, str]) -> list[dict[str, Any]]:
    """One row per site: verdict, last run, runs, trend and the report's folder; worst
    verdicts first (then by site). Reads each site's latest runs only (two queries for
    the whole fleet), never every run."""
    recent = {site: (past, text) for site, past, text in history.recent_verdicts(_TIMELINE)}
    rows = []
    for record in history.sites():
        past, text = recent.get(record.origin, ([record.last_verdict], None))
        rows.append(
            {
                "site": record.origin,
                "verdict": record.last_verdict,
                "last_run": record.last_started_at.replace(microsecond=0).isoformat(),
                "runs": record.runs,
                "trend": _trend(past),
                "timeline": past,
                "report": _report_link(record.origin, slugs),
                "drawn": record.origin in slugs,
                "name": _label(record.origin, slugs.get(record.origin)),
                "savings": json.loads(text) if text else None,
            }
        )
    return sorted(rows, key=lambda r: (_RANK.get(r["verdict"], 0), r["site"]))


def _report_link(origin: str, slugs: dict[str, str]) -> str:
    """The site's report; for a site whose report is not drawn, the page that says how
    to draw it (the site in its fragment: one page for every such site)."""
    if origin in slugs:
        return f"{slugs[origin]}/index.html"
    return f"{NOT_DRAWN_PAGE}#{quote(origin, safe='')}"


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


def page_name(number: int) -> str:
    """The file of the index's page ``number`` (from 1): ``index.html``, ``index-2.html``..."""
    return "index.html" if number == 1 else f"index-{number}.html"


def write_fleet_index(
    history: History, folder: Path, slugs: dict[str, str], page_rows: int = PAGE_ROWS
) -> Path:
    """Write the fleet index listing every site into ``folder``: ``index.html``, and
    ``index-2.html``... when there are more than ``page_rows`` sites (pages of one order,
    worst verdicts first, each linking every page); ``slugs`` maps site -> report folder.
    Pages of an earlier, longer index are removed. Returns ``index.html``'s path."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = fleet_rows(history, slugs)
    pages = max(1, -(-len(rows) // page_rows))
    shared = _shared(rows, pages)
    template = environment().get_template("fleet.html")
    for number in range(1, pages + 1):
        chunk = rows[(number - 1) * page_rows : number * page_rows]
        first = (number - 1) * page_rows + 1 if chunk else 0
        context = {**shared, "rows": chunk, "page": number, "first": first}
        with (folder / page_name(number)).open("w", encoding="utf-8") as out:
            out.writelines(template.generate(**context))
    _remove_stale_pages(folder, pages)
    _write_not_drawn_page(folder, shared)
    return folder / "index.html"


def _write_not_drawn_page(folder: Path, shared: dict[str, Any]) -> None:
    """The page that tells how to draw a report not drawn yet (the command, for the site
    named in the link's fragment)."""
    page = (
        environment()
        .get_template("not-drawn.html")
        .render(**shared, folder=shlex.quote(str(folder)))
    )
    (folder / NOT_DRAWN_PAGE).write_text(page, encoding="utf-8")


def _shared(rows: list[dict[str, Any]], pages: int) -> dict[str, Any]:
    """What every page of the index shows: the whole fleet's counts and savings."""
    trends = {r["trend"] for r in rows}
    return {
        "total": len(rows),
        "counts": verdict_counts(rows),
        "savings": fleet_savings(rows),
        "trends": [t for t in TRENDS if t in trends],
        "ranks": _RANK,
        "trend_ranks": {t: i for i, t in enumerate(TRENDS)},
        "generated_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "version": __version__,
        "pages": [(n, page_name(n)) for n in range(1, pages + 1)],
    }


def _remove_stale_pages(folder: Path, pages: int) -> None:
    for path in folder.glob("index-*.html"):
        number = path.stem.removeprefix("index-")
        if number.isdigit() and int(number) > pages:
            path.unlink()
