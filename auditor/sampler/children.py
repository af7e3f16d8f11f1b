"""A list page's newest child: the lastmod its listed URLs carry in the inventory (touches
nothing: no network, disk or database; reads the walk's entries).

Many generators date a list page (tag, category, home, archive) by its newest child. Such
a lastmod moves when a child is edited while the list itself may show nothing new, and
judged by the article rule it would read as "lastmod advanced without a change". The
scorer judges such a page as a list instead (:mod:`auditor.scorer.tally`), when the page's
lastmod is the ``newest`` date of :meth:`ChildDates.newest`.

A page's children are the URLs its content area links to (:mod:`auditor.evidence.listing`)
that the inventory lists in *another* segment than the page (posts for a tag page; a
build stamp shared by every list page is never another list's "child date"), dated. They
say a date of their own only when there are at least :data:`MIN_CHILDREN`, with more than
one value among them, and the newest held by at most half of them: children that all
carry one moment are stamped, not dated.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pandas as pd

__all__ = ["MIN_CHILDREN", "ChildDates"]

#: Dated children a page must list in the inventory to be judged as a list.
MIN_CHILDREN = 2


class ChildDates:
    """The inventory's lastmods looked up by the links of a sampled page; each page's
    answer is remembered (the sequential sampler asks again after every fetch)."""

    def __init__(self, entries: pd.DataFrame) -> None:
        self._entries = entries
        self._segment = "segment" if "segment" in entries.columns else "sitemap"
        self._known: dict[str, datetime | None] = {}

    def newest(self, loc: str, segment: str, links: Sequence[str]) -> datetime | None:
        """The newest lastmod among the children of the page ``loc`` (of segment key
        ``segment``) that ``links`` name, when they date it (module docstring); else None."""
        if loc not in self._known:
            self._known[loc] = self._newest(loc, segment, links)
        return self._known[loc]

    def _newest(self, loc: str, segment: str, links: Sequence[str]) -> datetime | None:
        if len(links) < MIN_CHILDREN or self._entries.empty:
            return None
        frame = self._entries
        listed = frame[frame["loc"].isin(links)]
        listed = listed[(listed["loc"] != loc) & (listed[self._segment].astype(str) != segment)]
        dates = listed.drop_duplicates("loc")["lastmod"].dropna()
        if len(dates) < MIN_CHILDREN or dates.nunique() < 2:
            return None
        newest = dates.max()
        if 2 * int((dates == newest).sum()) > len(dates):
            return None
        return pd.Timestamp(newest).to_pydatetime()
