"""When a page's own dateModified vouches for nothing.

- **Render time**: a page that stamps ``dateModified`` with the moment it is
  rendered says "now" on every fetch. Such a date sits within seconds of the
  response's ``Date`` header (or of our fetch time when there is none).
- **Shared**: a template constant or a static site's build time is the same on
  (nearly) every page of the site; only a sample of pages shows it.
- **Future**: a page cannot have been modified after it was served.

Also noted, not judged: a dateModified earlier than the datePublished.

Touches: nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from auditor.evidence.compare import period_of
from auditor.evidence.model import RENDER_TIME, SHARED, DatedValue, PageEvidence

__all__ = [
    "FUTURE",
    "MIN_SHARED_PAGES",
    "MIN_SHARED_SHARE",
    "RENDER_TIME_WINDOW",
    "judge_date_modified",
    "mark_shared_date_modified",
    "modified_before_published",
]

#: How close to the response's Date a dateModified counts as render time. A server writes
#: both while answering, a few ms apart, a few seconds on a slow render; a CDN keeps the
#: origin's Date with the cached copy, so the pair stays together. A real edit landing
#: within 10 s before our request is rare enough that calling it render time costs nothing.
RENDER_TIME_WINDOW = timedelta(seconds=10)
#: A dateModified shared by at least this many sampled pages ...
MIN_SHARED_PAGES = 5
#: ... and by at least this share of the sampled pages that carry one is a site constant.
MIN_SHARED_SHARE = 0.9
FUTURE = "future-date-modified"
_EXACT = frozenset({"minute", "second", "fraction"})


def judge_date_modified(value: DatedValue | None, reference: datetime) -> DatedValue | None:
    """``value`` marked not credible when it is render time or in the future of ``reference``
    (the response's Date, else the fetch time). Dates without a time cannot show render time."""
    if value is None:
        return None
    start, end = period_of(value.value, value.precision)
    if start > reference + RENDER_TIME_WINDOW:
        return replace(value, credible=False, why_not_credible=FUTURE)
    near = start - RENDER_TIME_WINDOW <= reference <= end + RENDER_TIME_WINDOW
    if value.precision in _EXACT and near:
        return replace(value, credible=False, why_not_credible=RENDER_TIME)
    return value


def modified_before_published(modified: DatedValue | None, published: DatedValue | None) -> bool:
    """True when dateModified ends before datePublished could have begun."""
    if modified is None or published is None:
        return False
    return (
        period_of(modified.value, modified.precision)[1]
        < period_of(published.value, published.precision)[0]
    )


def mark_shared_date_modified(
    pages: Sequence[PageEvidence],
    *,
    min_pages: int = MIN_SHARED_PAGES,
    min_share: float = MIN_SHARED_SHARE,
) -> list[PageEvidence]:
    """The pages, with a dateModified shared across the sample marked not credible.

    A value (instant and precision) is shared when at least ``min_pages`` pages and at
    least ``min_share`` of the pages carrying a dateModified carry it.
    """
    keys = [_key(p.date_modified) for p in pages if p.date_modified is not None]
    if not keys:
        return list(pages)
    value, count = Counter(keys).most_common(1)[0]
    if count < min_pages or count < min_share * len(keys):
        return list(pages)
    marked = []
    for page in pages:
        dm = page.date_modified
        if dm is not None and _key(dm) == value and dm.credible:
            page = replace(page, date_modified=replace(dm, credible=False, why_not_credible=SHARED))
        marked.append(page)
    return marked


def _key(value: DatedValue) -> tuple[datetime, str]:
    return value.value, value.precision
