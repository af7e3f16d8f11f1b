"""Counting the evidence: lastmod against credible dateModified, and changes across runs.

Touches: nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from auditor.evidence import DatedValue, compare_lastmod
from auditor.evidence.compare import period_of
from auditor.evidence.credibility import (
    MIN_SHARED_PAGES,
    MIN_SHARED_SHARE,
    RENDER_TIME_WINDOW,
)
from auditor.scorer.changes import compare_pages, is_compared, is_marginal, lastmod_advanced
from auditor.scorer.result import PageObservation

if TYPE_CHECKING:
    from auditor.history.crawl import CrawlCounts

__all__ = [
    "Tally",
    "crawl_tally",
    "dated_by_a_child",
    "lastmod_advanced",
    "shared_last_modified",
    "tally_pages",
    "template_changed_widely",
    "too_coarse",
]

#: Reasons a dateModified vouches for nothing (the evidence stage's words).
_RENDER_TIME = frozenset(
    {"render-time-date-modified", "shared-date-modified", "future-date-modified"}
)


#: Precisions that stand for a period long enough to hide a change between two fetches.
_COARSE = frozenset({"year", "month", "day"})


@dataclass
class Tally:
    """The evidence gathered for one sub-sitemap (or pooled over several)."""

    requested: int = 0
    fetched: int = 0
    skipped_robots: int = 0
    skipped_overloaded: int = 0  # not asked for: the host was given up (429/503)
    skipped_time_budget: int = 0  # not asked for: the sampling time budget was spent
    blocked: int = 0  # asked for, and answered with a bot wall (auditor.http.walls)
    with_date_modified: int = 0  # credible ones, on pages with a lastmod
    agree: int = 0
    disagree: int = 0
    render_time: int = 0
    errors_seconds: list[float] = field(default_factory=list)  # signed, lastmod - page
    # HTTP Last-Modified, read only on pages without a structured dateModified: it can
    # support trust (an agreement is no coincidence) but never condemn on its own (caches
    # and proxies rewrite it), so it has counts of its own.
    with_last_modified: int = 0
    last_modified_agree: int = 0
    #: Agreeing comparisons whose dateModified is the page's datePublished: a lastmod that
    #: repeats a never-updated date agrees whether or not it would follow an update.
    published_agree: int = 0
    compared: int = 0  # panel pages read in both runs
    changed: int = 0  # C: main content changed
    advanced: int = 0  # L: lastmod moved forward
    both: int = 0  # L and C
    template_only: int = 0  # compared pages where only the site's template differed
    #: Compared pages whose lastmod advanced while only their own page's template or frame
    #: differed (a title moved into its slot, a table re-indented), the rest of the site's
    #: template unchanged: a change of the page's source that is not one of its words.
    #: Neither for lastmod nor against it (:func:`_count_change`).
    ambiguous: int = 0
    interval_days: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        """Pool ``other`` into this tally."""
        for name in (
            "requested", "fetched", "skipped_robots", "with_date_modified", "agree",
            "disagree", "render_time", "compared", "changed", "advanced", "both",
            "with_last_modified", "last_modified_agree", "skipped_overloaded",
            "skipped_time_budget", "template_only", "published_agree", "ambiguous", "blocked",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors_seconds += other.errors_seconds
        self.interval_days += other.interval_days

    @property
    def changed_without_lastmod(self) -> int:
        """C and not L."""
        return self.changed - self.both

    @property
    def lastmod_without_change(self) -> int:
        """L and not C."""
        return self.advanced - self.both

    @property
    def against(self) -> int:
        """Observations that showed lastmod wrong: a disagreeing credible date, a change
        lastmod missed, a move without a change."""
        return self.disagree + self.changed_without_lastmod + self.lastmod_without_change

    @property
    def precision(self) -> float | None:
        """P(C | L) across runs, or None when lastmod never advanced."""
        return self.both / self.advanced if self.advanced else None

    @property
    def recall(self) -> float | None:
        """P(L | C) across runs, or None when no content change was seen."""
        return self.both / self.changed if self.changed else None

    @property
    def consistent(self) -> int:
        """Panel pages where lastmod told the truth: L and C, or neither."""
        return self.compared - self.changed_without_lastmod - self.lastmod_without_change


def tally_pages(
    current: Sequence[PageObservation],
    previous: Iterable[PageObservation] = (),
    template_wide: bool | None = None,
) -> dict[str, Tally]:
    """One tally per sub-sitemap from this run's pages and the previous run's (pages not yet
    compared with their previous fetch are compared here: :mod:`auditor.scorer.changes`).
    ``template_wide``: whether the site's template changed on most compared pages (None:
    judged from ``current``)."""
    previous = list(previous)
    if previous and not is_compared(current):
        current = compare_pages(current, previous)
    if template_wide is None:
        template_wide = template_changed_widely(current)
    earlier = {p.loc: p for p in previous if p.ok}
    shared = shared_last_modified(current)
    tallies: dict[str, Tally] = {}
    for page in current:
        tally = tallies.setdefault(page.sitemap, Tally())
        _count_fetch(tally, page)
        if page.ok:
            _count_date_modified(tally, page)
            if page.date_modified is None and page.http_last_modified != shared:
                _count_last_modified(tally, page)
            before = earlier.get(page.loc)
            if before is not None:
                _count_change(tally, before, page, template_wide)
    return tallies


def _count_fetch(tally: Tally, page: PageObservation) -> None:
    if page.error == "robots":
        tally.skipped_robots += 1
    elif page.error == "overloaded":
        tally.skipped_overloaded += 1
    elif page.error == "time-budget":
        tally.skipped_time_budget += 1
    elif page.error not in ("off-site", "not-http"):
        tally.requested += 1
        tally.blocked += page.error == "blocked"
    tally.fetched += page.ok


def _count_date_modified(tally: Tally, page: PageObservation) -> None:
    if page.date_modified is None:
        return
    if not page.date_modified_credible:
        tally.render_time += page.why_not_credible in _RENDER_TIME
        return
    if page.lastmod is None or page.lastmod_precision is None:
        return
    observed = DatedValue(
        page.date_modified,
        "",
        page.date_modified_source or "json-ld",
        page.date_modified_precision or "second",
    )
    comparison = compare_lastmod(page.lastmod, page.lastmod_precision, observed)
    tally.with_date_modified += 1
    tally.agree += comparison.agrees
    tally.disagree += not comparison.agrees
    tally.published_agree += comparison.agrees and page.date_published == page.date_modified
    tally.errors_seconds.append(comparison.signed_error_seconds)


def _too_coarse(before: PageObservation, now: PageObservation) -> bool:
    return too_coarse(now.lastmod, now.lastmod_precision, before.fetched_at)


def too_coarse(lastmod: datetime | None, precision: str | None, earlier: datetime) -> bool:
    """True when the earlier fetch (at ``earlier``) falls inside the current lastmod's own
    period (a date-only lastmod of the day both fetches happened): a change between them
    may leave lastmod exactly as it was, so the pair says nothing about lastmod."""
    if lastmod is None or precision not in _COARSE:
        return False
    start, end = period_of(lastmod, precision)
    return start <= earlier <= end


def shared_last_modified(pages: Sequence[PageObservation]) -> datetime | None:
    """A Last-Modified on (nearly) every sampled page: a deploy or build time, no evidence."""
    values = [p.http_last_modified for p in pages if p.ok and p.http_last_modified is not None]
    if not values:
        return None
    value, count = Counter(values).most_common(1)[0]
    if count >= MIN_SHARED_PAGES and count >= MIN_SHARED_SHARE * len(values):
        return value
    return None


def _count_last_modified(tally: Tally, page: PageObservation) -> None:
    """A credible HTTP Last-Modified against lastmod (second precision, RFC 1123)."""
    value = page.http_last_modified
    if value is None or page.lastmod is None or page.lastmod_precision is None:
        return
    if value > page.fetched_at - RENDER_TIME_WINDOW:
        return  # the moment of serving (or later): says nothing about the content
    observed = DatedValue(value, "", "http", "second")
    comparison = compare_lastmod(page.lastmod, page.lastmod_precision, observed)
    tally.with_last_modified += 1
    tally.last_modified_agree += comparison.agrees


def template_changed_widely(pages: Sequence[PageObservation]) -> bool:
    """The template or page frame differed on at least half of the compared pages: a
    redesign or a build stamp, not one page's own edit."""
    compared = [p for p in pages if p.content_changed is not None]
    return bool(compared) and 2 * sum(bool(p.template_changed) for p in compared) >= len(compared)


def _count_change(
    tally: Tally, before: PageObservation, now: PageObservation, template_wide: bool = False
) -> None:
    """Main content changed (C) against lastmod advanced (L). C is the comparison's, where
    the site's template is left out; pages compared before it existed use the exact hash.
    A page whose lastmod advanced while only its own frame differed (a breadcrumb label,
    a title moved into its slot: :func:`_own_frame_changed`, the site's template left out
    even when it changed too) is ambiguous: counted apart, neither way; so is a marginal change
    (:data:`~auditor.scorer.changes.MARGINAL_SHARE`) lastmod did not follow.

    A list page is judged like any page: its lastmod moving to its newest child's date
    (:func:`dated_by_a_child`) while its own content did not change is a fetch a crawler
    scheduling on lastmod wastes, so it counts against lastmod's precision; the child is
    only the report's explanation of why lastmod moved."""
    if before.fp_exact is None or now.fp_exact is None:
        return
    if _too_coarse(before, now):
        return  # lastmod's precision cannot show a change made since the previous fetch
    if now.content_changed is not None:
        changed = now.content_changed
        tally.template_only += not changed and bool(now.template_changed)
    else:
        changed = before.fp_exact != now.fp_exact
    advanced = lastmod_advanced(before.lastmod, now.lastmod)
    own_frame = _own_frame_changed(now, template_wide)
    if advanced and not changed and own_frame:
        tally.ambiguous += 1
        return
    if changed and not advanced and is_marginal(now):
        tally.ambiguous += 1  # a line's change that lastmod need not follow
        return
    tally.compared += 1
    tally.changed += changed
    tally.advanced += advanced
    tally.both += changed and advanced
    days = (now.fetched_at - before.fetched_at).total_seconds() / 86_400
    tally.interval_days.append(max(days, 0.0))


def _own_frame_changed(page: PageObservation, template_wide: bool) -> bool:
    """The page's own frame differed: the comparison says so with the site's template
    left out (a sitewide footer year does not hide a page's own breadcrumb edit); rows
    compared before that was kept fall back to "its frame differed and the site's
    template did not move on most pages"."""
    if page.own_frame_changed is not None:
        return page.own_frame_changed
    return bool(page.template_changed) and not template_wide


def dated_by_a_child(page: PageObservation) -> bool:
    """True when the page is a list dated by its newest child: its lastmod is, at its
    precision, the newest lastmod of the children it lists (:mod:`auditor.sampler.children`).
    Such a lastmod moves with a child's edit, which a list of titles need not show: the
    report names it as the reason lastmod moved; the move still counts as any page's
    (:func:`_count_change`)."""
    child, lastmod = page.newest_child, page.lastmod
    if child is None or lastmod is None:
        return False
    start, end = period_of(lastmod, page.lastmod_precision or "second")
    return start <= child <= end


def crawl_tally(counts: CrawlCounts) -> Tally:
    """The tally of what the crawler's fetches showed (:mod:`auditor.history.crawl`):
    across-fetches comparisons, as the panel's across runs, and dateModified checks."""
    mean = counts.interval_days / counts.compared if counts.compared else 0.0
    return Tally(
        compared=counts.compared,
        changed=counts.changed,
        advanced=counts.advanced,
        both=counts.both,
        interval_days=[mean] * counts.compared,
        with_date_modified=counts.dated,
        agree=counts.agree,
        disagree=counts.dated - counts.agree,
    )
