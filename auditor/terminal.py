"""Plain-text renderings of results for the terminal (the CLI prints them).

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from auditor.dispersion import DispersionReport, SegmentDispersion, flag_codes
from auditor.dispersion.figures import Figures
from auditor.models import Problem
from auditor.scorer.result import AuditResult, SegmentVerdict
from auditor.words import counted

if TYPE_CHECKING:
    from auditor.inspection import Inspection

__all__ = [
    "PLAIN_VERDICTS",
    "audit_summary",
    "inspect_summary",
    "inspect_table",
    "plain_verdict",
    "problem_lines",
    "render_table",
    "short_name",
]

_HEADERS = ("sub-sitemap", "URLs", "dated", "distinct", "top value", "top share", "flags")
_RIGHT = {1, 2, 3, 5}  # numeric columns, right-aligned
_MAX_NAME = 60


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int] | None = None
) -> str:
    """A text table with a rule under the headers; columns in ``right`` right-aligned."""
    right = _RIGHT if right is None else right
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def inspect_table(report: DispersionReport) -> str:
    """One row per sub-sitemap, then one row for the whole site."""
    rows = [_row(_named(s), s.figures, flag_codes(s.flags)) for s in _ordered(report)]
    rows.append(_row("(all)", report.figures, flag_codes(report.flags)))
    return render_table(_HEADERS, rows)


def inspect_summary(report: DispersionReport, sitemaps: int, problems: int) -> str:
    """The one-line verdict of a first look."""
    f = report.figures
    flags = flag_codes(report.flags)
    said = ", ".join(flags) if flags else "no flag raised"
    return (
        f"{report.site or 'target'}: {counted(f.urls, 'URL')} in "
        f"{counted(sitemaps, 'sitemap file')}, {f.share_with_lastmod:.0%} with lastmod, "
        f"{counted(f.distinct_seconds, 'distinct value')}; {said}; "
        f"{counted(problems, 'problem')}"
    )


#: Google's sitemap index rules, as Search Console titles the problem (the detail says more).
SEARCH_CONSOLE_TITLES = {
    "url-not-allowed": "URL not allowed",
    "path-mismatch": "Path mismatch",
    "url-in-index": "Incorrect sitemap index format: <url> entries",
    "changefreq-in-index": "Invalid XML tag in a sitemap index",
    "too-many-sitemaps": "Too many sitemaps in sitemap index",
    "duplicate-sitemap": "Sitemap listed twice",
    "nested-index": "Incorrect sitemap index format: Nested sitemap indexes",
}


def search_console_lines(problems: Sequence[Problem]) -> list[str]:
    """The problems Google's Search Console would report on the indexes, as it words them."""
    lines = []
    for p in problems:
        title = SEARCH_CONSOLE_TITLES.get(p.code)
        if title is not None:
            said = p.detail if p.detail.startswith(title.split(":")[0]) else f"{title}: {p.detail}"
            lines.append(f"  {_short(p.sitemap)}: {said} ({p.code})")
    return ["Search Console would report:", *lines] if lines else []


def extension_lines(found: Inspection) -> list[str]:
    """The extension shares and the publication-date notes of an inspection."""
    lines = []
    if found.extensions is not None:
        e = found.extensions.to_dict()
        lines.append(
            f"extensions: hreflang {e['share_with_hreflang']:.0%}, images "
            f"{e['share_with_images']:.0%}, video {e['share_with_video']:.0%}, "
            f"news {e['share_news']:.0%} of {found.extensions.urls:,} URLs"
        )
    for note in found.notes:
        lines.append(f"note {note['code']}: {_short(str(note['segment']))}: {note['detail']}")
    return lines


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


def short_name(url: str) -> str:
    """A sitemap URL without its origin."""
    parts = urlsplit(url)
    if not parts.netloc:
        return url
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _short(url: str) -> str:
    """A sitemap URL without its origin, shortened to fit a column."""
    name = short_name(url)
    return name if len(name) <= _MAX_NAME else "…" + name[-(_MAX_NAME - 1) :]


PLAIN_VERDICTS = {
    "trusted": "lastmod can be trusted: schedule crawls on it.",
    "partial": "lastmod can be trusted for some sub-sitemaps only: schedule on it there, "
    "re-crawl the others on your own schedule.",
    "untrusted": "lastmod cannot be trusted: it does not track content changes. Re-crawl on "
    "your own schedule.",
    "no-lastmod": "the sitemaps carry (almost) no lastmod: use them to discover URLs, not to "
    "schedule crawls.",
    "inconclusive": "not enough independent evidence yet to trust lastmod. Run `auditor "
    "reverify` once pages have had time to change.",
}


UNREADABLE = (
    "no sitemap could be read, so there is nothing to judge yet: see the problems, fix the "
    "target (a site origin or a sitemap URL), and audit again."
)


def plain_verdict(verdict: str, reason_codes: Sequence[str] = ()) -> str:
    """The verdict in plain words (the unreadable case said as what it is)."""
    if "sitemap-unreadable" in reason_codes:
        return UNREADABLE
    return PLAIN_VERDICTS[verdict]


def audit_summary(result: AuditResult) -> str:
    """The verdict in plain words, its reasons with their figures, and what to do."""
    plain = plain_verdict(result.verdict, [r.code for r in result.reasons])
    lines = [f"{result.site}: {result.verdict.upper()}: {plain}"]
    if result.degraded:
        lines.append(
            f"  DEGRADED: this site was trusted on its previous run; it is {result.verdict} now."
        )
    s = result.sample
    if s.requested:
        lines.append(
            f"  sample: {s.fetched} of {counted(s.requested, 'page')} read, {s.skipped_robots} "
            f"skipped by robots.txt; {s.with_date_modified} with a credible dateModified: "
            f"{s.agree} agree, {s.disagree} disagree"
        )
    else:
        lines.append(f"  sample: {no_sample([seg.to_dict() for seg in result.segments])}")
    if s.stopped is not None:
        why = "the site kept answering 429/503" if s.stopped == "overloaded" else "time ran out"
        lines.append(f"  sampling stopped early ({s.stopped}): {why}; no page more was asked for")
    if result.changes is not None:
        c = result.changes
        lines.append(
            f"  since the previous run: {c.compared} pages compared, {c.changed} changed, "
            f"lastmod advanced on {c.lastmod_advanced}"
        )
    for reason in result.reasons[:12]:
        where = f" [{_short(reason.segment)}]" if reason.segment else ""
        lines.append(f"  - {reason.code}{where}: {reason.detail}")
    lines += _what_to_do(result)
    lines += _savings(result.savings)
    return "\n".join(lines)


def no_sample(segments: Sequence[dict[str, Any]]) -> str:
    """What an audit that asked for no page weighed instead (from its segments' JSON):
    the crawler's fetches since the previous run, or the lastmod values and the history."""
    crawled = [s["crawled"] for s in segments if s.get("crawled")]
    compared = sum(c["compared"] for c in crawled)
    dated = sum(c["with_date_modified"] for c in crawled)
    if not compared and not dated:
        return (
            "no page read: none was asked for; the verdict rests on the lastmod values and "
            "the runs before"
        )
    return (
        "no page read: the crawler's fetches stood in (auditor crawled): "
        f"{counted(compared, 'fetch', 'fetches')} compared with the one before, "
        f"{dated:,} with a credible dateModified"
    )


def _savings(figures: dict[str, object] | None) -> list[str]:
    """What scheduling on the verdicts saves, in one line."""
    if not figures or not figures.get("urls"):
        return []
    return [
        f"  a plan on these verdicts: {figures['fetches_per_day']:,} fetches a day against "
        f"{figures['uniform_fetches_per_day']:,} for a daily recrawl "
        f"({float(str(figures['saved_share'])):.0%} saved), expected freshness "
        f"{figures['freshness']} against {figures['uniform_freshness']} (auditor plan)"
    ]


def _named(segment: SegmentVerdict | SegmentDispersion) -> str:
    """A segment's short name, with its group's pattern on a group."""
    name = _short(segment.sitemap)
    return f"{name} [{segment.group.pattern}]" if segment.group else name


def _what_to_do(result: AuditResult) -> list[str]:
    trusted = [_named(s) for s in result.segments if s.verdict == "trusted"]
    others = [_named(s) for s in result.segments if s.verdict != "trusted" and s.urls]
    lines = []
    if trusted and others:
        lines.append(f"  schedule on lastmod: {', '.join(trusted[:5])}" + _more(trusted))
        lines.append(f"  re-crawl on your own schedule: {', '.join(others[:5])}" + _more(others))
    if result.recheck_days is not None:
        lines.append(f"  re-verify in {result.recheck_days:.0f} days (auditor reverify)")
    return lines


def _more(items: list[str]) -> str:
    return f" and {len(items) - 5} more" if len(items) > 5 else ""
