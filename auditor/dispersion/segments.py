"""Segments: the units a verdict is given on, a sub-sitemap or a group within one.

A sub-sitemap that :func:`~auditor.dispersion.groups.find_groups` splits is judged group
by group: each group is a segment with its own figures, flags, sample and evidence. A
segment is named by its **key**, the sub-sitemap's URL alone when it is not split, else
the URL and the group's pattern joined by :data:`SEPARATOR` (a character no URL holds
unescaped). Keys are internal: results name a segment by ``sitemap`` and ``group``.

A :class:`Segmenter` holds the groupings learned from one walk and labels any page
with its key: this run's sample, past runs' pages (re-labelled by the current grouping,
so the evidence of every run counts towards the groups of today), a plan's entries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from auditor.dispersion.groups import Group, Grouping, find_groups

if TYPE_CHECKING:
    import pandas as pd

    from auditor.dispersion.movement import PreviousValues

__all__ = ["SEPARATOR", "Segmenter", "learn_segmenter", "segment_key"]

#: Joins a sub-sitemap's URL and a group's pattern in a segment key.
SEPARATOR = "\x1f"


def segment_key(sitemap: str, pattern: str | None) -> str:
    """The key of a sub-sitemap (``pattern`` None) or of one of its groups."""
    return sitemap if pattern is None else f"{sitemap}{SEPARATOR}{pattern}"


@dataclass(frozen=True)
class Segmenter:
    """The groupings of the sub-sitemaps that were split (the others are one segment)."""

    groupings: Mapping[str, Grouping] = field(default_factory=dict)

    def key_of(self, sitemap: str, loc: str) -> str:
        """The segment key of one page listed in ``sitemap``."""
        grouping = self.groupings.get(sitemap)
        return sitemap if grouping is None else segment_key(sitemap, grouping.label_of(loc))

    def keys(self, sitemaps: Sequence[str], locs: Sequence[str]) -> list[str]:
        """The segment key of each (sitemap, loc) pair, labelled one sub-sitemap at a time."""
        keys = [str(s) for s in sitemaps]
        if not self.groupings:
            return keys
        names = np.asarray(keys, dtype=object)
        for sitemap, grouping in self.groupings.items():
            rows = np.flatnonzero(names == sitemap)
            if rows.size:
                labels = grouping.labels([str(locs[int(i)]) for i in rows])
                for i, label in zip(rows, labels, strict=True):
                    keys[i] = segment_key(sitemap, label)
        return keys

    def group(self, sitemap: str, pattern: str) -> Group | None:
        """The group ``pattern`` of ``sitemap``, if it was split so."""
        grouping = self.groupings.get(sitemap)
        if grouping is None:
            return None
        return next((g for g in grouping.groups if g.pattern == pattern), None)

    def is_material(self, sitemap: str, group: Group | None) -> bool:
        """True unless ``group`` is a leftover too small to speak for its sub-sitemap."""
        grouping = self.groupings.get(sitemap)
        return group is None or grouping is None or grouping.is_material(group.pattern)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON values, sub-sitemap by sub-sitemap (:meth:`from_dict`)."""
        return {sitemap: g.to_dict() for sitemap, g in sorted(self.groupings.items())}

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> Segmenter:
        """The segmenter :meth:`to_dict` wrote (an empty one for None)."""
        found = {}
        for sitemap, grouping in (data or {}).items():
            assert isinstance(grouping, Mapping)
            found[str(sitemap)] = Grouping.from_dict(grouping)
        return cls(found)


def learn_segmenter(
    entries: pd.DataFrame, codes: np.ndarray, names: Sequence[str], seconds: np.ndarray,
    dated: np.ndarray, previous: PreviousValues | None = None,
) -> Segmenter:  # fmt: skip
    """The groupings of every sub-sitemap of ``entries`` (rows coded by ``codes`` into
    ``names``; their lastmods as seconds where ``dated``; the previous walk's aligned)."""
    locs = entries["loc"].to_numpy(dtype=object)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    found = {}
    for code, name in enumerate(names):
        rows = order[bounds[code] : bounds[code + 1]]
        grouping = find_groups(
            locs[rows],
            seconds[rows],
            dated[rows],
            previous.seconds[rows] if previous is not None else None,
            previous.dated[rows] if previous is not None else None,
        )
        if grouping.groups:
            found[str(name)] = grouping
    return Segmenter(found)
