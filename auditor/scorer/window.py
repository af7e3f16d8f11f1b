"""Evidence that accumulates: this run's comparisons pooled with those of recent runs.

A sub-sitemap's verdict weighs the window of the last :data:`WINDOW_RUNS` runs (this
one included) that started within :data:`WINDOW_DAYS` of it:

- **credible dates** (dateModified, or Last-Modified as backup): each page counts once,
  by its newest observation in the window (a page re-fetched unchanged says nothing new,
  so counting it again would inflate the confidence);
- **across runs**: every pair of consecutive runs in the window adds its comparisons
  (each pair observes a different interval of the pages' lives).

The run's own evidence is kept beside the pool, so contrary evidence counts in the run it
appears (a long agreeing history cannot drown it).

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from auditor.scorer.result import PageObservation
from auditor.scorer.tally import (
    Tally,
    shared_last_modified,
    tally_pages,
    template_changed_widely,
)

__all__ = [
    "WINDOW_DAYS",
    "WINDOW_RUNS",
    "PastRun",
    "SegmentEvidence",
    "changes_only",
    "count_checks",
    "gather_evidence",
    "page_tallies",
    "window_runs",
]

#: Runs whose evidence a verdict weighs, this one included. A site's way of writing
#: lastmod (its CMS or generator) changes rarely, so the evidence of the last few runs
#: still describes it; three runs at the default 7-day re-verification span three weeks,
#: and a change of generator shows at once as contrary evidence in the run it appears.
WINDOW_RUNS = 3
#: ... and no run older than this counts: a site half a year on may have been rebuilt.
WINDOW_DAYS = 90.0

_DATE_FIELDS = (
    "with_date_modified", "agree", "disagree", "render_time",
    "with_last_modified", "last_modified_agree", "published_agree",
)  # fmt: skip
_CHANGE_FIELDS = ("compared", "changed", "advanced", "both", "ambiguous")

PageFilter = Callable[[PageObservation], bool]


@dataclass(frozen=True)
class PastRun:
    """One earlier run of a site: when it started and the pages it sampled."""

    started_at: datetime
    pages: tuple[PageObservation, ...]


@dataclass
class SegmentEvidence:
    """What one sub-sitemap's verdict is judged on."""

    own: Tally = field(default_factory=Tally)  # this run's pages alone
    pooled: Tally = field(default_factory=Tally)  # this run's with the window's
    runs: int = 1  # runs in the window with pages of this sub-sitemap (this one counted)
    checked: int = 0  # this run's pages that were compared with lastmod at all
    against: int = 0  # ... of which showed lastmod wrong
    shared: Tally | None = None  # the pool on pages carrying a shared lastmod, when flagged
    has_previous: bool = False  # an earlier run's pages could be compared with this run's


def window_runs(past_runs: Sequence[PastRun], started_at: datetime) -> list[PastRun]:
    """The earlier runs that still count (newest first, as given)."""
    oldest = started_at - timedelta(days=WINDOW_DAYS)
    return [r for r in past_runs[: WINDOW_RUNS - 1] if r.started_at >= oldest]


def gather_evidence(
    current: Sequence[PageObservation],
    previous: Sequence[PageObservation],
    past_runs: Sequence[PastRun],
    started_at: datetime,
    keep: PageFilter | None = None,
) -> dict[str, SegmentEvidence]:
    """Each sub-sitemap's own and pooled evidence (only the pages ``keep`` accepts).

    ``past_runs`` are the runs before this one, newest first: the first is the previous
    run (``previous`` holds its pages); one run beyond the window may be read, as the
    earlier side of the window's oldest pair.
    """
    window = window_runs(past_runs, started_at)
    keep = keep or (lambda _page: True)
    mine = [p for p in current if keep(p)]
    own = tally_pages(mine, previous)
    dates = tally_pages(_newest_per_page([mine, *(r.pages for r in window)], keep))
    pairs = [own] + [
        tally_pages([p for p in run.pages if keep(p)], past_runs[i + 1].pages)
        for i, run in enumerate(window)
        if i + 1 < len(past_runs)
    ]
    sampled = [{p.sitemap for p in run.pages} for run in window]
    evidence: dict[str, SegmentEvidence] = {}
    for name in {*own, *dates, *(n for pair in pairs for n in pair)}:
        pooled = _part(dates.get(name), _DATE_FIELDS, with_errors=True)
        for pair in pairs:
            if name in pair:
                pooled.add(_part(pair[name], _CHANGE_FIELDS, with_errors=False))
        runs = 1 + sum(name in names for names in sampled)
        own_tally = own.get(name, Tally())
        evidence[name] = SegmentEvidence(own_tally, pooled, runs, has_previous=bool(previous))
    return evidence


def count_checks(
    evidence: dict[str, SegmentEvidence],
    current: Sequence[PageObservation],
    previous: Sequence[PageObservation],
) -> None:
    """Count, per sub-sitemap, this run's pages compared with lastmod and those against it.

    A page is checked when its credible date agrees or disagrees with lastmod or it was
    compared across runs; it is against when any of that showed lastmod wrong (a
    Last-Modified that disagrees is neither: it never condemns on its own).
    """
    for page, tally in page_tallies(current, previous):
        if page.sitemap not in evidence:
            continue
        target = evidence[page.sitemap]
        target.checked += tally.with_date_modified + tally.last_modified_agree + tally.compared > 0
        target.against += tally.against > 0


def page_tallies(
    current: Sequence[PageObservation], previous: Sequence[PageObservation]
) -> Iterator[tuple[PageObservation, Tally]]:
    """Each page of this run that was read, with the tally of what it alone says of
    lastmod, counted as the run's tally counts it: a Last-Modified shared by the sample
    (a deploy time) left out, the template's reach judged over the whole run."""
    earlier = {p.loc: p for p in previous if p.ok}
    common = shared_last_modified(current)
    wide = template_changed_widely(current)
    for page in current:
        if not page.ok:
            continue
        judged = page
        if page.http_last_modified is not None and page.http_last_modified == common:
            judged = replace(page, http_last_modified=None)
        before = earlier.get(page.loc)
        yield page, tally_pages([judged], [before] if before else [], wide)[page.sitemap]


def _newest_per_page(
    runs: Iterable[Iterable[PageObservation]], keep: PageFilter
) -> list[PageObservation]:
    """The newest observation of each page read in any of ``runs`` (newest run first)."""
    seen: dict[str, PageObservation] = {}
    for pages in runs:
        for page in pages:
            if page.ok and keep(page) and page.loc not in seen:
                seen[page.loc] = page
    return list(seen.values())


def changes_only(tally: Tally) -> Tally:
    """The across-runs change counts of ``tally`` alone (no dates)."""
    return _part(tally, _CHANGE_FIELDS, with_errors=False)


def _part(tally: Tally | None, names: tuple[str, ...], *, with_errors: bool) -> Tally:
    """A tally holding only the ``names`` counts of ``tally``."""
    part = Tally()
    if tally is None:
        return part
    for name in names:
        setattr(part, name, getattr(tally, name))
    if with_errors:
        part.errors_seconds = list(tally.errors_seconds)
    else:
        part.interval_days = list(tally.interval_days)
    return part
