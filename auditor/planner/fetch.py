"""A planned fetch (:class:`PlannedFetch`, what ``auditor plan`` lists and a crawler
reads), and the fetches a host's schedule chose named as such.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from auditor.planner.schedule import REASONS, Chosen, SitePages

__all__ = ["PlannedFetch", "named_fetches"]


@dataclass(frozen=True)
class PlannedFetch:
    """One fetch the crawler should make: when, why, and how likely it finds a change.

    ``priority`` is higher-first; ``due_at`` aware; ``p_changed`` the estimated chance
    that the page changed since the crawler's copy (1.0 when it has none); ``reason``
    one of ``lastmod-advanced``, ``new-url``, ``never-fetched``, ``rate``,
    ``verification``, ``explore``, ``retry``; ``verdict`` the verdict of the URL's sub-sitemap (or
    its group) the plan read lastmod by (``untrusted`` where the crawler's fetches
    contradicted a trusted one since its audit).
    """

    url: str
    site: str
    sitemap: str
    due_at: datetime
    reason: str
    priority: float
    p_changed: float
    lastmod: datetime | None = None
    verdict: str = "inconclusive"

    def to_dict(self) -> dict[str, Any]:
        """The JSON Lines object of ``auditor plan``."""
        return {
            "url": self.url,
            "site": self.site,
            "sitemap": self.sitemap,
            "due_at": self.due_at.isoformat(),
            "reason": self.reason,
            "priority": round(self.priority, 6),
            "p_changed": round(self.p_changed, 4),
            "lastmod": self.lastmod.isoformat() if self.lastmod else None,
            "verdict": self.verdict,
        }


_FIELDS = tuple(PlannedFetch.__dataclass_fields__)


def named_fetches(
    pages: Sequence[SitePages], chosen: Chosen, moment: datetime
) -> Iterator[PlannedFetch]:
    """The ``chosen`` fetches of one host's ``pages`` named, in order: URL, sub-sitemap,
    due time, lastmod and verdict, read from plain lists (one Python value a fetch,
    not a numpy scalar), each due time made once."""
    due: dict[float, datetime] = {}
    codes = [site.segment.tolist() for site in pages]
    verdicts = [[signal.verdict for signal in site.signals] for site in pages]
    new = object.__new__
    for s, page, wait, reason, priority, p in zip(*(a.tolist() for a in chosen), strict=True):
        site, code = pages[s], codes[s][page]
        at = due.get(wait)
        if at is None:
            at = due[wait] = moment + timedelta(days=wait)
        values = (site.locs[page], site.site, site.sitemaps[code], at, REASONS[reason],
                  priority, p, site.lastmods[page], verdicts[s][code])  # fmt: skip
        # The frozen dataclass's fields set as its __init__ would, at half the cost of
        # its object.__setattr__ a field (42 million fetches for 100,000 sites).
        fetch = new(PlannedFetch)
        fetch.__dict__.update(zip(_FIELDS, values, strict=True))
        yield fetch
