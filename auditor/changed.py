"""The recrawl list: what a crawler should fetch since a moment, honouring trust per sub-sitemap."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

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
    for loc, lastmod, sitemap in zip(
        entries["loc"], entries["lastmod"], entries["sitemap"].astype(str), strict=True
    ):
        moment = None if lastmod is None or lastmod != lastmod else lastmod.to_pydatetime()
        if not (trusted_everywhere or verdicts.get(sitemap) == "trusted"):
            yield RecrawlItem(loc, moment, sitemap, "not-trusted")
        elif moment is None:
            yield RecrawlItem(loc, None, sitemap, "undated")
        elif moment > since:
            yield RecrawlItem(loc, moment, sitemap, "lastmod-newer")
