"""Exports of the history for notebooks and warehouses: CSV, Parquet or JSON via pandas."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from auditor.report import EXPORT_FORMATS

if TYPE_CHECKING:
    from auditor.history import History

__all__ = [
    "EXPORT_FORMATS",
    "EXPORT_TABLES",
    "coverage_tables",
    "export_tables",
    "extension_table",
    "neutralise_formulas",
]

EXPORT_TABLES = (
    "sites", "runs", "segments", "pages", "coverage", "coverage_findings", "extensions"
)  # fmt: skip
_FORMULA_STARTS = ("=", "+", "-", "@")


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first),
    made inert with a leading apostrophe. Numbers are left alone."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            out[column] = values.map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_STARTS) else v
            )
    return out


#: File name endings that differ from the format's name: JSON exports are JSON Lines.
_SUFFIXES = {"json": "jsonl"}


def export_tables(history: History, fmt: str, folder: Path) -> list[Path]:
    """Write sites, runs, segments (sub-sitemap verdicts), pages (page observations) and
    each site's coverage (per sub-sitemap, and finding by finding) and each run's sitemap
    extensions (per sub-sitemap) to ``folder`` in ``fmt``; returns the files written."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    tables = {**coverage_tables(history), "extensions": extension_table(history)}
    for name in EXPORT_TABLES:
        frame = tables[name] if name in tables else history.table(name)
        path = folder / f"{name}.{_SUFFIXES.get(fmt, fmt)}"
        if fmt == "csv":
            neutralise_formulas(frame).to_csv(path, index=False)
        elif fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_json(path, orient="records", lines=True, date_format="iso", force_ascii=False)
        written.append(path)
    return written


#: The columns of the coverage tables (an empty table keeps them).
COVERAGE_COLUMNS = (
    "site", "sitemap", "urls", "crawled", "not_crawled", "in_several_sitemaps", "redirect",
    "client_error", "server_error", "noindex", "canonical_elsewhere", "walked_at",
)  # fmt: skip
FINDING_COLUMNS = ("site", "sitemap", "finding", "url", "detail", "source")


def coverage_tables(history: History) -> dict[str, pd.DataFrame]:
    """Every site's coverage against the history's crawl record: ``coverage``, one row
    per sub-sitemap (its counts), and ``coverage_findings``, one row per URL and finding
    (every one but never-crawled URLs, which are counted)."""
    from auditor.coverage import check_coverage

    counts: list[dict[str, object]] = []
    findings: list[dict[str, object]] = []
    for site in history.sites():
        try:
            result = check_coverage(history, site.origin, limit=None)
        except ValueError:  # no inventory kept
            continue
        counts += result.sitemap_rows()
        findings += result.finding_rows()
    return {
        "coverage": pd.DataFrame(counts, columns=list(COVERAGE_COLUMNS)),
        "coverage_findings": pd.DataFrame(findings, columns=list(FINDING_COLUMNS)),
    }


#: The columns of the extensions table (an empty table keeps them).
EXTENSION_COLUMNS = (
    "run_id", "site", "started_at", "sitemap", "urls", "with_hreflang", "share_with_hreflang",
    "with_images", "share_with_images", "with_video", "share_with_video", "news", "share_news",
)  # fmt: skip


def extension_table(history: History) -> pd.DataFrame:
    """Each run's sitemap extensions, one row per sub-sitemap that carries any: URLs with
    hreflang alternates, with images, with video, news entries, and their shares (from
    the stored results' ``dispersion.extensions``)."""
    rows: list[dict[str, object]] = []
    runs = history.table("runs")
    for run_id, site, started in zip(runs["run_id"], runs["site"], runs["started_at"], strict=True):
        result = history.result(int(run_id)) or {}
        found = (result.get("dispersion") or {}).get("extensions") or {}
        for sitemap, shares in (found.get("by_sitemap") or {}).items():
            row = {"run_id": run_id, "site": site, "started_at": started, "sitemap": sitemap}
            rows.append({**row, **shares})
    return pd.DataFrame(rows, columns=list(EXTENSION_COLUMNS))
