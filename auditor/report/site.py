"""One site's HTML report with its PNG charts, written into a folder of its own.

Touches: the disk.
"""

from __future__ import annotations

import functools
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
from auditor.scorer.rules import CONTRARY_CODES
from auditor.scorer.verdict import DEFAULT_RECHECK_DAYS
from auditor.terminal import no_sample, plain_verdict
from auditor.words import counted

__all__ = [
    "advice",
    "plan_interval",
    "planned",
    "prepare",
    "render_site",
    "site_slug",
    "write_site_report",
]

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


@dataclass(frozen=True)
class Chart:
    """A chart in the report: its PNG file (None when there was nothing to draw)."""

    file: str | None
    alt: str
    caption: str
    #: Why there is no chart, in words (the end of "No chart of ALT: ...").
    empty: str


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
    env.globals.update(
        short=short_name,
        pct=_pct,
        change=page_change,
        plan_interval=plan_interval,
        contrary=sorted(CONTRARY_CODES),
        default_recheck=DEFAULT_RECHECK_DAYS,
        counted=counted,
    )
    env.filters["second"] = to_the_second
    return env


#: Before an http origin's folder name: a host name never holds "_" (RFC 952, 1123), so
#: no https origin's folder can be named so.
_HTTP_PREFIX = "http_"


def site_slug(site: str) -> str:
    """A folder name for a site, one per origin: its host, with the port when there is
    one, after ``http_`` for an http origin (``example.com``, ``example.com_8443``,
    ``http_127.0.0.1_8080``). An https origin keeps the name it always had; an http one
    had none of its own, and shared it with its https twin."""
    parts = urlsplit(site)
    host = (parts.hostname or "site").replace(":", "_")
    slug = f"{host}_{parts.port}" if parts.port else host
    return f"{_HTTP_PREFIX}{slug}" if parts.scheme == "http" else slug


def segment_name(segment: dict[str, Any]) -> str:
    """A segment's short name: its sub-sitemap's, and its group's pattern on a group."""
    group = segment.get("group")
    name = short_name(segment["sitemap"])
    return f"{name} [{group['pattern']}]" if group else name


def advice(latest: dict[str, Any]) -> list[str]:
    """What a data team should do, in words, from a result: the intervals are the plan's
    own (``savings.segments``: :mod:`auditor.planner.figures`) and the table's."""
    segments = [s for s in latest["segments"] if s["urls"]]
    trusted = [segment_name(s) for s in segments if s["verdict"] == "trusted"]
    others = [s for s in segments if s["verdict"] != "trusted"]
    lines = []
    if trusted:
        lines.append("Schedule crawls on lastmod for: " + ", ".join(trusted) + ".")
    if others:
        names = ", ".join(segment_name(s) for s in others)
        which = "the others" if trusted else "their pages"
        lines.append(
            f"Do not schedule on lastmod for {names}: re-fetch {which} {_refetch(latest, others)}."
        )
    if latest.get("recheck_days"):
        lines.append(_reverify(latest))
    return lines


def planned(latest: dict[str, Any]) -> dict[tuple[str, str | None], dict[str, Any]]:
    """The plan's figures of each segment of a result, by (sub-sitemap, group pattern)."""
    found = (latest.get("savings") or {}).get("segments") or []
    return {(s["sitemap"], s["group"]): s for s in found}


def plan_interval(latest: dict[str, Any], segment: dict[str, Any]) -> float | None:
    """The plan's mean interval between two fetches of a page of ``segment`` (days)."""
    figures = planned(latest).get(_key(segment))
    return None if figures is None else figures["interval_days"]


def _key(segment: dict[str, Any]) -> tuple[str, str | None]:
    return segment["sitemap"], (segment.get("group") or {}).get("pattern")


def _refetch(latest: dict[str, Any], others: list[dict[str, Any]]) -> str:
    """How often the plan re-fetches the pages of ``others``, from its own figures."""
    figures = planned(latest)
    mine = [figures.get(_key(s)) for s in others]
    if not mine or any(f is None for f in mine):
        return "as auditor plan schedules them, by their measured change rates"
    urls = sum(int(f["urls"]) for f in mine if f)
    fetches = sum(float(f["fetches_per_day"]) for f in mine if f)
    if fetches <= 0:
        return "as auditor plan schedules them: none is due yet at the default budget"
    every = max(1, round(urls / fetches))
    period = "every day" if every == 1 else f"every {every} days"
    return (
        f"about {period} on average ({_fetches(fetches)} a day for {urls:,} pages,"
        " as auditor plan schedules them)"
    )


def _fetches(count: float) -> str:
    """``count`` fetches in words: whole numbers without a decimal, one in the singular."""
    shown = f"{count:,.0f}" if round(count, 1) == round(count) else f"{count:,.1f}"
    return f"{shown} fetch" if shown == "1" else f"{shown} fetches"


def _reverify(latest: dict[str, Any]) -> str:
    """When to re-verify the site, and which row of the segments table says so."""
    days = round(latest["recheck_days"])
    soonest = [
        segment_name(s)
        for s in latest["segments"]
        if s.get("recheck_days") is not None and round(s["recheck_days"]) == days
    ]
    line = f"Re-verify this site in {_days(days)} (auditor reverify)"
    if soonest:
        return f"{line}: the soonest re-check of the table ({', '.join(soonest)})."
    return f"{line}: no sub-sitemap's panel measured a re-check yet."


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
            no_sample=no_sample(latest["segments"]),
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


def prepare() -> None:
    """Ready this process (this thread) to draw reports: the charts made
    (:func:`charts.prepare`) and the report's template compiled, so that its first
    report costs what the next do."""
    charts.prepare()
    environment().get_template("site.html")


def to_the_second(instant: str | datetime) -> str:
    """An instant (ISO 8601 text or a datetime) shown to the second, as the rest of the
    report shows them: ``2026-12-04T08:37:13+00:00``."""
    moment = datetime.fromisoformat(instant) if isinstance(instant, str) else instant
    return moment.replace(microsecond=0).isoformat()


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
                "no URL of the sitemaps carries a readable lastmod.",
            ),
            Chart(
                charts.draw_shared_values(top_shared_values(data.entries), folder),
                "the most shared lastmod values",
                "Values carried by more than one URL. A tall bar is a shared or generation stamp.",
                "no lastmod value is carried by more than one URL.",
            ),
        ],
        "sample": [
            Chart(
                charts.draw_sample_agreement(points, folder),
                "lastmod against dateModified",
                "Each sampled page with both dates; on the diagonal they agree.",
                "no sampled page has both a lastmod and a dateModified.",
            ),
            Chart(
                charts.draw_signed_error(points, folder),
                "the signed error",
                "lastmod minus a credible dateModified, in days.",
                "no sampled page has both a lastmod and a credible dateModified.",
            ),
        ],
        "history": [
            Chart(
                charts.draw_history(history_points(data.runs), folder),
                "the runs",
                "Precision and recall of lastmod across runs, and each run's verdict.",
                "no run to draw yet.",
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
