"""What a report shows, gathered from the history and shaped for charts and tables (pure).

Touches: the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from auditor.errors import UsageError
from auditor.scorer.result import PageObservation
from auditor.scorer.tally import dated_by_a_child
from auditor.terminal import short_name

if TYPE_CHECKING:
    from auditor.history import History

__all__ = [
    "ReportData",
    "crawl_batch_names",
    "history_points",
    "lastmod_by_month",
    "load_report_data",
    "page_change",
    "page_evidence",
    "sample_points",
    "short_name",
    "top_shared_values",
]

#: Sub-sitemaps drawn one by one in the lastmod-over-time chart; the rest are summed.
MAX_SEGMENT_LINES = 6
#: Spans longer than this many years are counted per year rather than per month.
MAX_MONTHLY_YEARS = 20
#: Lastmod values listed in the most-shared chart.
TOP_SHARED = 10


@dataclass(frozen=True)
class ReportData:
    """Everything one site's report needs."""

    site: str
    latest: dict[str, Any]  # the latest AuditResult JSON
    runs: list[dict[str, Any]]  # every run's AuditResult JSON, oldest first
    pages: list[PageObservation]  # the latest run's sample
    entries: pd.DataFrame | None  # the latest inventory (loc, lastmod, precision, sitemap)
    previous_pages: list[PageObservation] = field(default_factory=list)  # the run before's
    #: The coverage check against the history's crawl record (``auditor coverage --json``)
    coverage: dict[str, Any] | None = None
    #: The crawl batches the runs weighed that were taken back since (``auditor crawled
    #: --take-back``).
    taken_back: frozenset[int] = frozenset()


def load_report_data(history: History, site: str) -> ReportData:
    """The report's data for ``site`` from ``history``; a usage error when never audited."""
    runs = history.runs(site)
    if not runs:
        raise UsageError(f"no audit of {site} in the history: run `auditor audit {site}` first")
    results = [r for r in (history.result(run.run_id) for run in runs) if r is not None]
    latest = results[-1]
    before = results[-2] if len(results) > 1 else None
    return ReportData(
        site=site,
        latest=latest,
        runs=results,
        pages=history.pages(int(latest["run_id"])),
        entries=history.latest_entries(site),
        previous_pages=history.pages(int(before["run_id"])) if before else [],
        coverage=_coverage(history, site),
        taken_back=_taken_back(history, results),
    )


def _taken_back(history: History, results: list[dict[str, Any]]) -> frozenset[int]:
    """The batches the runs weighed (``crawl_batches``) that were taken back since."""
    named = {int(b) for r in results for b in r.get("crawl_batches") or ()}
    if not named:
        return frozenset()
    return frozenset(b.id for b in history.crawl_batches(named) if b.taken_back_at is not None)


def crawl_batch_names(ids: list[int], taken_back: frozenset[int] = frozenset()) -> str:
    """The crawl batches a run weighed, in words: ``batch 3``, ``batches 3 and 5 (taken
    back)``; ``-`` for none."""
    if not ids:
        return "-"
    names = [f"{b} (taken back)" if b in taken_back else str(b) for b in ids]
    if len(names) == 1:
        return f"batch {names[0]}"
    return f"batches {', '.join(names[:-1])} and {names[-1]}"


def _coverage(history: History, site: str) -> dict[str, Any] | None:
    """The site's coverage check against the history's crawl record, or None without an
    inventory."""
    from auditor.coverage import check_coverage

    try:
        return check_coverage(history, site).to_dict()
    except ValueError:
        return None


def page_evidence(pages: list[PageObservation], previous: list[PageObservation]) -> dict[str, str]:
    """What each sampled page said of lastmod, by loc, as the verdict counted it: ``for``
    or ``against`` (its credible date, its change against lastmod's move since the
    previous run), ``ambiguous`` (lastmod moved with only the page's own frame or a
    list's child, or a marginal change it did not follow), or
    nothing. The pages marked ``against`` are those that decided a contrary verdict."""
    from auditor.scorer.window import page_tallies

    found = {}
    for page, tally in page_tallies(pages, previous):
        if tally.against:
            found[page.loc] = "against"
        elif tally.ambiguous:
            found[page.loc] = "ambiguous"
        elif tally.agree + tally.last_modified_agree + tally.consistent:
            found[page.loc] = "for"
    return found


def lastmod_by_month(entries: pd.DataFrame | None) -> pd.DataFrame:
    """URLs per month of lastmod (per year over long spans), one column per sub-sitemap (the
    largest ones; the rest summed as "others"), empty periods as zero; empty when nothing
    is dated."""
    if entries is None or entries.empty:
        return pd.DataFrame()
    dated = entries.dropna(subset=["lastmod"])
    if dated.empty:
        return pd.DataFrame()
    names = dated["sitemap"].astype(str).map(short_name)
    largest = names.value_counts().index[:MAX_SEGMENT_LINES]
    names = names.where(names.isin(largest), "others")
    lastmod = pd.to_datetime(dated["lastmod"], utc=True).dt.tz_localize(None)
    span_years = lastmod.max().year - lastmod.min().year
    freq = "M" if span_years <= MAX_MONTHLY_YEARS else "Y"
    period = lastmod.dt.to_period(freq)
    # URLs per period and sub-sitemap: pd.crosstab's table, in a third of its time
    table = period.groupby([period, names]).size().unstack(fill_value=0).sort_index()
    full = pd.period_range(table.index.min(), table.index.max(), freq=freq)
    table = table.reindex(full, fill_value=0)  # empty periods drawn as zero, not skipped
    table.index = pd.PeriodIndex(table.index).to_timestamp()
    table.index.name = "month" if freq == "M" else "year"
    table.columns.name = None
    return table


def top_shared_values(entries: pd.DataFrame | None, n: int = TOP_SHARED) -> pd.DataFrame:
    """The lastmod values carried by more than one URL, most shared first."""
    columns = ["value", "urls", "share"]
    if entries is None or entries.empty:
        return pd.DataFrame(columns=columns)
    lastmod = pd.to_datetime(entries["lastmod"], utc=True).dropna()
    if lastmod.empty:
        return pd.DataFrame(columns=columns)
    counts = lastmod.value_counts()
    counts = counts[counts > 1].head(n)
    frame = pd.DataFrame(
        {
            "value": counts.index,
            "urls": counts.to_numpy(),
            "share": counts.to_numpy() / len(lastmod),
        }
    )
    return frame.reset_index(drop=True)


def sample_points(pages: list[PageObservation]) -> pd.DataFrame:
    """Sampled pages with both a lastmod and a dateModified, and the gap in days."""
    rows = [
        {
            "loc": p.loc,
            "sitemap": p.sitemap,
            "lastmod": p.lastmod,
            "date_modified": p.date_modified,
            "credible": bool(p.date_modified_credible),
            "why_not_credible": p.why_not_credible,
            "error_days": (p.lastmod - p.date_modified).total_seconds() / 86_400,
        }
        for p in pages
        if p.lastmod is not None and p.date_modified is not None
    ]
    columns = ["loc", "sitemap", "lastmod", "date_modified", "credible", "why_not_credible"]
    return pd.DataFrame(rows, columns=[*columns, "error_days"])


def page_change(page: PageObservation) -> str:
    """How a sampled page compared with its previous fetch, in words ("-" when it was not
    compared): "changed: +2 paragraphs in the article body (12% of its words)",
    "template only: footer", "unchanged"."""
    if page.content_changed is None:
        return "-"
    summary = page.change_summary or ("main text changed" if page.content_changed else "unchanged")
    if not page.content_changed:
        return summary + _why_lastmod_moved(page)
    share = f" ({page.change_share:.0%} of its words)" if page.change_share is not None else ""
    return f"changed: {summary}{share}"


def _why_lastmod_moved(page: PageObservation) -> str:
    """On an unchanged list page dated by its newest child, why its lastmod moved."""
    if page.newest_child is None or not dated_by_a_child(page):
        return ""
    return f"; lastmod dated by its newest child ({page.newest_child.date().isoformat()})"


def history_points(runs: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per run: when, the verdict, and precision and recall with their intervals."""
    rows = []
    for result in runs:
        changes = result.get("changes") or {}
        p_interval = changes.get("precision_interval") or [None, None]
        r_interval = changes.get("recall_interval") or [None, None]
        rows.append(
            {
                "run_id": result["run_id"],
                "started_at": datetime.fromisoformat(result["started_at"]),
                "verdict": result["verdict"],
                "precision": changes.get("precision"),
                "precision_low": p_interval[0],
                "precision_high": p_interval[1],
                "recall": changes.get("recall"),
                "recall_low": r_interval[0],
                "recall_high": r_interval[1],
            }
        )
    return pd.DataFrame(rows)
