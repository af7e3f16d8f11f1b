"""A site that answered the sample with bot walls: no verdict it cannot stand behind.

A page answered with a challenge or block page (``blocked``, :mod:`auditor.http.walls`)
says nothing of the site's changes, and the pages that got through are no fair sample
of it. When walls answered most of the sample, the site is ``inconclusive`` with the
reason ``blocked`` and a hint, unless its lastmod values alone condemned it (a
generation-time or missing lastmod needs no page to be told). Sampling stops early
against a wall: past :data:`MIN_STOP` pages, nearly all walls, every segment is decided.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from auditor.scorer.result import Reason, SegmentVerdict
from auditor.scorer.tally import Tally

__all__ = [
    "BLOCKED_SHARE",
    "MIN_BLOCKED",
    "blocked_reason",
    "condemned_without_pages",
    "stopped_by_walls",
    "walled",
]

#: A site is walled when at least this share of the pages asked for were walls ...
BLOCKED_SHARE = 0.5
#: ... and at least this many.
MIN_BLOCKED = 3
#: Sampling stops once this many pages were asked for and STOP_SHARE of them were walls:
#: asking a wall again only tells it twice.
MIN_STOP = 5
STOP_SHARE = 0.8
#: Reasons told by the lastmod values alone, before any page.
_WITHOUT_PAGES = frozenset(
    {"no-lastmod", "shared-timestamp", "generation-time", "future-lastmod", "invalid-lastmod"}
)
HINT = (
    "try --proxy (a network the site lets through), --contact with an address the site "
    "can reach, or ask the site to allow auditor's User-Agent"
)


def walled(site: Tally) -> bool:
    """True when walls answered most of the sample (:data:`BLOCKED_SHARE`)."""
    return site.blocked >= MIN_BLOCKED and site.blocked >= BLOCKED_SHARE * site.requested


def stopped_by_walls(site: Tally) -> bool:
    """True when sampling should ask no more pages: nearly every one was a wall."""
    return site.requested >= MIN_STOP and site.blocked >= STOP_SHARE * site.requested


def condemned_without_pages(segments: Sequence[SegmentVerdict]) -> bool:
    """True when every segment that speaks is untrusted or no-lastmod on its lastmod
    values alone."""
    speaking = [s for s in segments if s.urls and s.material] or [s for s in segments if s.urls]
    return bool(speaking) and all(
        s.verdict in ("untrusted", "no-lastmod")
        and s.reasons
        and all(r.code in _WITHOUT_PAGES for r in s.reasons)
        for s in speaking
    )


def blocked_reason(site: Tally, walls: Mapping[str, int]) -> Reason:
    """The ``blocked`` reason: how many pages were walls, whose, and what to try."""
    named = ", ".join(f"{detail} x{n}" for detail, n in sorted(walls.items(), key=lambda w: -w[1]))
    which = f" ({named})" if named else ""
    detail = (
        f"{site.blocked} of {site.requested} sampled pages were a bot wall{which}: "
        f"the site turned auditor away; {HINT}"
    )
    return Reason("blocked", detail)
