"""Each re-fetched page against its previous fetch, on the observations history keeps.

:func:`compare_pages` fills the change fields of this run's observations
(``content_changed``, ``change_share``, ``change_summary``, ``template_changed``...)
from the evidence stage's comparison of the two runs
(:func:`auditor.evidence.compare_runs`: template blocks learned from both runs' pages
are left out). The audit saves the observations it returns; the tally counts a change
only where ``content_changed`` says so.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from auditor.evidence import Fetch, compare_runs
from auditor.evidence.runs import template_change
from auditor.scorer.result import PageObservation, Reason

__all__ = [
    "MARGINAL_SHARE",
    "TEMPLATE_CHANGE",
    "compare_pages",
    "is_marginal",
    "lastmod_advanced",
    "template_notes",
]

#: The note a result carries when the site's template changed between runs.
TEMPLATE_CHANGE = "template-change"
#: A change confined to under this share of a page's main-content words is marginal: a
#: changed block counts all its words, so 2% is one 20-word line of a 1,000-word article
#: (a byline, a reading time, a counter, a fixed typo), while a paragraph added or
#: rewritten is well above it. Google asks lastmod to move on significant changes; a
#: lastmod that stays put on a marginal one is neither right nor wrong
#: (:func:`auditor.scorer.tally._count_change`).
MARGINAL_SHARE = 0.02


def compare_pages(
    current: Sequence[PageObservation], previous: Sequence[PageObservation]
) -> list[PageObservation]:
    """``current`` with the change fields set on each page also read in ``previous``
    (the others are returned as they are)."""
    if not previous:
        return list(current)
    comparison = compare_runs(_fetches(current), _fetches(previous), _steady(current, previous))
    compared = []
    for page in current:
        change = comparison.pages.get(page.loc) if page.ok else None
        if change is not None:
            page = replace(
                page,
                content_changed=change.changed,
                change_share=change.share,
                change_distance=comparison.distances.get(page.loc),
                change_summary=change.summary,
                template_changed=change.template_changed,
                template_regions=", ".join(change.template_regions) or None,
                change_method=change.method,
                own_frame_changed=change.own_frame_changed,
            )
        compared.append(page)
    return compared


def is_compared(pages: Sequence[PageObservation]) -> bool:
    """True when the pages already carry the comparison (none of them lacks it while
    having a fingerprint and a previous fetch is the caller's concern)."""
    return any(p.content_changed is not None for p in pages)


def template_notes(
    current: Sequence[PageObservation], previous: Sequence[PageObservation] = ()
) -> tuple[Reason, ...]:
    """A ``template-change`` note when the site's template changed between the runs."""
    if not previous:
        return ()
    pages = current if is_compared(current) else compare_pages(current, previous)
    change = template_change([tuple(_regions(p)) for p in pages if p.content_changed is not None])
    return () if change is None else (Reason(TEMPLATE_CHANGE, change.detail()),)


def _regions(page: PageObservation) -> list[str]:
    return [r for r in (page.template_regions or "").split(", ") if r]


def _steady(current: Sequence[PageObservation], previous: Sequence[PageObservation]) -> set[str]:
    """The pages read in both runs whose lastmod did not advance between them: where a
    frame slot that differs anyway is restless, not a page's own edit."""
    before = {p.loc: p.lastmod for p in previous if p.ok}
    return {
        p.loc
        for p in current
        if p.ok and p.loc in before and not lastmod_advanced(before[p.loc], p.lastmod)
    }


def lastmod_advanced(before: datetime | None, now: datetime | None) -> bool:
    """Lastmod moved forward between two fetches (it appeared, or it is later)."""
    return now is not None and (before is None or now > before)


def _fetches(pages: Sequence[PageObservation]) -> list[Fetch]:
    return [
        Fetch(p.loc, p.sitemap, p.fp_exact if p.ok else None, p.fp_simhash, p.fp_blocks)
        for p in pages
    ]


def is_marginal(page: PageObservation) -> bool:
    """True when the page's change since the previous run is marginal: its main content
    changed in under :data:`MARGINAL_SHARE` of its words."""
    share = page.change_share
    return bool(page.content_changed) and share is not None and share < MARGINAL_SHARE
