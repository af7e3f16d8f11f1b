"""Segments: the units a verdict is given on, a sub-sitemap or a group within one.

A sub-sitemap that :func:`~auditor.dispersion.groups.find_groups` splits is judged group
by group: each group is a segment with its own figures, flags, sample and evidence. A
segment is named by its **key**, the sub-sitemap's URL alone when it is not split, else
the URL and the group's pattern joined by :data:`SEPARATOR` (a character no URL holds
unescaped). Keys are internal: results name a segment by ``sitemap`` and ``group``.

A :class:`Segmenter` holds the groupings learned from one walk and labels any page
with its key: this run's sample, past runs' pages (re-labelled by the current grouping,
so the evidence of every run counts towards the groups of today), a plan's entries.

Touches: nothing.
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

__all__ = [
    "SCREEN_URLS",
    "SEPARATOR",
    "Segmenter",
    "learn_segmenter",
    "rows_by_code",
    "segment_key",
]

#: A file larger than this is first grouped on a random sample of this many URLs (seeded by
#: the file's size: the same file, the same sample), and in
#: full only when the sample splits: a group of 10% of 10,000 sampled URLs is seen within
#: a point, and grouping a million-URL inventory of unsplit files costs a sample
#: each (bench_dispersion.py) instead of a regex pass over every URL.
SCREEN_URLS = 10_000
#: Joins a sub-sitemap's URL and a group's pattern in a segment key.
SEPARATOR = "\x1f"


def rows_by_code(codes: np.ndarray, count: int) -> list[np.ndarray]:
    """The rows of each code ``0 .. count - 1`` (in row order), by one stable sort."""
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(count + 1))
    return [order[bounds[code] : bounds[code + 1]] for code in range(count)]


def segment_key(sitemap: str, pattern: str | None) -> str:
    """The key of a sub-sitemap (``pattern`` None) or of one of its groups."""
    return sitemap if pattern is None else f"{sitemap}{SEPARATOR}{pattern}"


@dataclass(frozen=True)
class Segmenter:
    """The groupings of the sub-sitemaps that were split (the others are one segment)."""

    groupings: Mapping[str, Grouping] = field(default_factory=dict)

    def keys(self, sitemaps: Sequence[str], locs: Sequence[str]) -> list[str]:
        """The segment key of each (sitemap, loc) pair, labelled one sub-sitemap at a time."""
        if not self.groupings:
            return [str(s) for s in sitemaps]
        files, file_codes = np.unique(np.asarray(sitemaps, dtype=object), return_inverse=True)
        codes, names = self.codes(
            file_codes, [str(f) for f in files], np.asarray(locs, dtype=object)
        )
        table = np.array(
            [segment_key(sitemap, pattern) for sitemap, pattern in names], dtype=object
        )
        keys: list[str] = table[codes].tolist()
        return keys

    def codes(
        self, file_codes: np.ndarray, files: Sequence[str], locs: np.ndarray
    ) -> tuple[np.ndarray, list[tuple[str, str | None]]]:
        """Each row's segment code, from its file's code (into ``files``) and its loc, and
        each code's (sub-sitemap, group pattern or None): vectorised per file."""
        codes = np.empty(len(file_codes), dtype=np.int64)
        names: list[tuple[str, str | None]] = []
        for sitemap, rows in zip(files, rows_by_code(file_codes, len(files)), strict=True):
            grouping = self.groupings.get(sitemap)
            if grouping is None:
                codes[rows] = len(names)
                names.append((sitemap, None))
                continue
            labels = np.asarray(grouping.labels(locs[rows]), dtype=object)
            for pattern in dict.fromkeys(labels.tolist()):
                codes[rows[labels == pattern]] = len(names)
                names.append((sitemap, pattern))
        return codes, names

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
    locs = entries["loc"].to_numpy()
    found = {}
    for name, rows in zip(names, rows_by_code(codes, len(names)), strict=True):
        if len(rows) > SCREEN_URLS:  # most files are one behaviour: a sample says so
            picks = np.random.default_rng(len(rows)).choice(len(rows), SCREEN_URLS, replace=False)
            screen = rows[np.sort(picks)]  # random, not a stride: files list by section
            if not _grouping(screen, locs, seconds, dated, previous).groups:
                continue
        grouping = _grouping(rows, locs, seconds, dated, previous)
        if grouping.groups:
            found[str(name)] = grouping
    return Segmenter(found)


def _grouping(
    rows: np.ndarray, locs: np.ndarray, seconds: np.ndarray, dated: np.ndarray,
    previous: PreviousValues | None,
) -> Grouping:  # fmt: skip
    return find_groups(
        locs[rows],
        seconds[rows],
        dated[rows],
        previous.seconds[rows] if previous is not None else None,
        previous.dated[rows] if previous is not None else None,
    )
