"""The recrawl list: what a crawler should fetch since a moment, honouring trust per segment
(a sub-sitemap, or a group within one).

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from auditor.dispersion.segments import Segmenter
from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["RecrawlItem", "recrawl_list"]


@dataclass(frozen=True)
class RecrawlItem:
    """One URL to fetch, and why: ``lastmod-newer``, ``undated`` or ``not-trusted``."""

    loc: str
    lastmod: datetime | None
    sitemap: str
    why: str

    def to_dict(self) -> dict[str, object]:
        """The JSONL object."""
        return {
            "loc": self.loc,
            "lastmod": self.lastmod.isoformat() if self.lastmod else None,
            "sitemap": self.sitemap,
            "why": self.why,
        }


def recrawl_list(history: History, site: str, since: datetime) -> Iterator[RecrawlItem]:
    """From the site's latest audit: in a trusted sub-sitemap, the URLs whose lastmod is
    newer than ``since`` and the undated ones; elsewhere, every URL."""
    run = history.latest_run(site)
    if run is None:
        raise UsageError(f"no audit of {site} in the history: run `auditor audit {site}` first")
    entries = history.latest_entries(site)
    if entries is None:
        return
    verdicts = history.segment_verdicts(run.run_id)
    trusted_everywhere = run.verdict == "trusted"
    sitemaps = entries["sitemap"].astype(str).tolist()
    keys = _segmenter(history, run.run_id).keys(sitemaps, entries["loc"].tolist())
    for loc, lastmod, sitemap, key in zip(
        entries["loc"], entries["lastmod"], sitemaps, keys, strict=True
    ):
        moment = None if lastmod is None or lastmod != lastmod else lastmod.to_pydatetime()
        verdict = verdicts.get(key)
        if not (verdict == "trusted" or (trusted_everywhere and verdict is None)):
            yield RecrawlItem(loc, moment, sitemap, "not-trusted")
        elif moment is None:
            yield RecrawlItem(loc, None, sitemap, "undated")
        elif moment > since:
            yield RecrawlItem(loc, moment, sitemap, "lastmod-newer")


def _segmenter(history: History, run_id: int) -> Segmenter:
    """The groups the run judged its split sub-sitemaps by (none for older runs)."""
    result = history.result(run_id) or {}
    return Segmenter.from_dict((result.get("dispersion") or {}).get("groupings"))
