"""One site's HTML report with its PNG charts, written into a folder of its own.

Touches: the disk.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape

from auditor import __version__
from auditor.report import charts
from auditor.report.data import (
    ReportData,
    crawl_batch_names,
    history_points,
    lastmod_by_month,
    page_change,
    page_evidence,
    sample_points,
    short_name,
    top_shared_values,
)
from auditor.terminal import plain_verdict

__all__ = ["advice", "render_site", "site_slug", "write_site_report"]

#: The coverage table's columns: finding code and heading.
COVERAGE_COLUMNS = (
    ("not-crawled", "never crawled"),
    ("in-several-sitemaps", "in several sub-sitemaps"),
    ("redirect", "redirect"),
    ("client-error", "4xx"),
    ("server-error", "5xx"),
    ("noindex", "noindex"),
    ("canonical-elsewhere", "canonical elsewhere"),
)

#: When nothing says how often pages change, re-fetch this often (days).
DEFAULT_REFETCH_DAYS = 7
MAX_REFETCH_DAYS = 30


@dataclass(frozen=True)
class Chart:
    """A chart in the report: its PNG file (None when there was nothing to draw)."""

    file: str | None
    alt: str
    caption: str


@functools.cache
def environment() -> Environment:
    """The jinja2 environment: package templates, every value escaped (one a process:
    it keeps the compiled templates)."""
    env = Environment(
        loader=PackageLoader("auditor.report", "templates"),
        autoescape=select_autoescape(["html"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(short=short_name, pct=_pct, change=page_change)
    return env


def site_slug(site: str) -> str:
    """A folder name for a site: its host, with the port when there is one."""
    parts = urlsplit(site)
    host = (parts.hostname or "site").replace(":", "_")
    return f"{host}_{parts.port}" if parts.port else host


def segment_name(segment: dict[str, Any]) -> str:
    """A segment's short name: its sub-sitemap's, and its group's pattern on a group."""
    group = segment.get("group")
    name = short_name(segment["sitemap"])
    return f"{name} [{group['pattern']}]" if group else name


def advice(latest: dict[str, Any]) -> list[str]:
    """What a data team should do, in words, from a result."""
    segments = [s for s in latest["segments"] if s["urls"]]
    trusted = [segment_name(s) for s in segments if s["verdict"] == "trusted"]
    others = [s for s in segments if s["verdict"] != "trusted"]
    lines = []
    if trusted:
        lines.append("Schedule crawls on lastmod for: " + ", ".join(trusted) + ".")
    if others:
        names = ", ".join(segment_name(s) for s in others)
        every = _refetch_days(others)
        period = "every day" if every == 1 else f"every {every} days"
        which = "the others" if trusted else "their pages"
        lines.append(f"Do not schedule on lastmod for {names}: re-fetch {which} {period}.")
    if latest.get("recheck_days"):
        days = _days(round(latest["recheck_days"]))
        lines.append(f"Re-verify this site in {days} (auditor reverify).")
    return lines


def _refetch_days(segments: list[dict[str, Any]]) -> int:
    rates = [s["change_rate"] for s in segments if s.get("change_rate")]
    if not rates:
        return DEFAULT_REFETCH_DAYS
    return max(1, min(MAX_REFETCH_DAYS, math.floor(1 / float(max(rates)))))


def render_site(data: ReportData, chart_list: dict[str, list[Chart]]) -> str:
    """The report's HTML."""
    latest = data.latest
    return (
        environment()
        .get_template("site.html")
        .render(
            site=data.site,
            latest=latest,
            plain=plain_verdict(latest["verdict"], [r["code"] for r in latest["reasons"]]),
            advice=advice(latest),
            runs=data.runs,
            pages=data.pages,
            evidence=page_evidence(data.pages, data.previous_pages),
            coverage=data.coverage,
            coverage_columns=COVERAGE_COLUMNS,
            batches=functools.partial(crawl_batch_names, taken_back=data.taken_back),
            taken_back=data.taken_back,
            charts=chart_list,
            generated_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
            version=__version__,
        )
    )


def write_site_report(data: ReportData, folder: Path) -> Path:
    """Draw the charts and write ``index.html`` into ``folder``; returns the HTML path."""
    folder.mkdir(parents=True, exist_ok=True)
    points = sample_points(data.pages)
    chart_list = {
        "dispersion": [
            Chart(
                charts.draw_lastmod_over_time(lastmod_by_month(data.entries), folder),
                "lastmod over time",
                "URLs per month of their lastmod, per sub-sitemap.",
            ),
            Chart(
                charts.draw_shared_values(top_shared_values(data.entries), folder),
                "the most shared lastmod values",
                "Values carried by more than one URL: a tall bar is a shared or generation stamp.",
            ),
        ],
        "sample": [
            Chart(
                charts.draw_sample_agreement(points, folder),
                "lastmod against dateModified",
                "Each sampled page with both dates; on the diagonal they agree.",
            ),
            Chart(
                charts.draw_signed_error(points, folder),
                "the signed error",
                "lastmod minus a credible dateModified, in days.",
            ),
        ],
        "history": [
            Chart(
                charts.draw_history(history_points(data.runs), folder),
                "the runs",
                "Precision and recall of lastmod across runs, and each run's verdict.",
            ),
        ],
    }
    path = folder / "index.html"
    path.write_text(render_site(data, chart_list), encoding="utf-8")
    return path


def _days(count: int) -> str:
    return "1 day" if count == 1 else f"{count} days"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"
