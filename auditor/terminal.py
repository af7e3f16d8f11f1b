"""Plain-text renderings of results for the terminal (the CLI prints them)."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from auditor.dispersion import DispersionReport, SegmentDispersion, flag_codes
from auditor.dispersion.figures import Figures
from auditor.models import Problem

__all__ = ["inspect_summary", "inspect_table", "problem_lines", "render_table"]

_HEADERS = ("sub-sitemap", "URLs", "dated", "distinct", "top value", "top share", "flags")
_RIGHT = {1, 2, 3, 5}  # numeric columns, right-aligned
_MAX_NAME = 60


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A left/right-aligned text table with a rule under the headers."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            str(c).rjust(w) if i in _RIGHT else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def inspect_table(report: DispersionReport) -> str:
    """One row per sub-sitemap, then one row for the whole site."""
    rows = [_row(_short(s.sitemap), s.figures, flag_codes(s.flags)) for s in _ordered(report)]
    rows.append(_row("(all)", report.figures, flag_codes(report.flags)))
    return render_table(_HEADERS, rows)


def inspect_summary(report: DispersionReport, sitemaps: int, problems: int) -> str:
    """The one-line verdict of a first look."""
    f = report.figures
    flags = flag_codes(report.flags)
    said = ", ".join(flags) if flags else "no flag raised"
    return (
        f"{report.site or 'target'}: {f.urls:,} URLs in {sitemaps:,} sitemap files, "
        f"{f.share_with_lastmod:.0%} with lastmod, {f.distinct_seconds:,} distinct values; "
        f"{said}; {problems:,} problems"
    )


def problem_lines(problems: Sequence[Problem], limit: int = 10) -> list[str]:
    """The first ``limit`` problems, one a line, and how many more there are."""
    lines = [f"  {p.code}: {_short(p.sitemap)}: {p.detail}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"  ... and {len(problems) - limit:,} more (--json lists them all)")
    return ["problems:", *lines] if lines else []


def _ordered(report: DispersionReport) -> list[SegmentDispersion]:
    return sorted(report.segments, key=lambda s: (-s.figures.urls, s.sitemap))


def _row(name: str, f: Figures, flags: list[str]) -> list[str]:
    top = f.top_value.strftime("%Y-%m-%d %H:%M:%S") if f.top_value else "-"
    return [
        name,
        f"{f.urls:,}",
        f"{f.share_with_lastmod:.0%}" if f.urls else "-",
        f"{f.distinct_seconds:,}",
        top,
        f"{f.top_share:.0%}" if f.with_lastmod else "-",
        ", ".join(flags) or "-",
    ]


def _short(url: str) -> str:
    """A sitemap URL without its origin, shortened to fit a column."""
    parts = urlsplit(url)
    name = url
    if parts.netloc:
        name = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return name if len(name) <= _MAX_NAME else "…" + name[-(_MAX_NAME - 1) :]
