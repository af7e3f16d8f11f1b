"""The dispersion analyser: a pure stage from an inventory to a DispersionReport.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from auditor.dispersion.figures import Figures, LastmodArrays, compute_figures
from auditor.dispersion.flags import Flag, SegmentTraits, flags_for
from auditor.dispersion.generation import Generation, generation_share
from auditor.dispersion.groups import Group
from auditor.dispersion.movement import Movement, PreviousValues, align_previous, movement_of
from auditor.dispersion.segments import Segmenter, learn_segmenter, rows_by_code, segment_key
from auditor.models import SitemapFile
from auditor.walker.dates import parse_rfc822

if TYPE_CHECKING:
    import pandas as pd

    from auditor.walker.inventory import Inventory

__all__ = ["DispersionReport", "SegmentDispersion", "analyse", "analyse_entries"]

_DATE_ONLY = ("year", "month", "day")
#: File kinds that list recent items by design: their lastmods cluster by day.
_RECENT_KINDS = frozenset({"rss", "atom"})
#: A sub-sitemap whose entries mostly carry news:publication_date is a news sitemap.
_NEWS_MAJORITY = 0.5
_PAGE_KINDS = frozenset({"urlset", "text", "rss", "atom"})


@dataclass(frozen=True)
class SegmentDispersion:
    """The analysis of one segment: a sub-sitemap (a file that lists pages), or one
    ``group`` of its URLs when the file mixes behaviours (:mod:`.segments`)."""

    sitemap: str
    kind: str
    figures: Figures
    generation: Generation
    movement: Movement | None
    flags: tuple[Flag, ...]
    group: Group | None = None
    material: bool = True  # False: a leftover group too small to speak for its file

    @property
    def key(self) -> str:
        """The segment's key (:func:`~auditor.dispersion.segments.segment_key`)."""
        return segment_key(self.sitemap, self.group.pattern if self.group else None)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form: ``sitemap``, ``urls`` and ``flags`` (codes) first; ``group``
        where the segment is one group of its file."""
        group = {"group": self.group.to_dict()} if self.group else {}
        return {
            "sitemap": self.sitemap,
            **group,
            "urls": self.figures.urls,
            "flags": flag_codes(self.flags),
            "kind": self.kind,
            "flag_details": [f.to_dict() for f in self.flags],
            "figures": self.figures.to_dict(),
            "generation": self.generation.to_dict(),
            "movement": self.movement.to_dict() if self.movement else None,
        }


@dataclass(frozen=True)
class DispersionReport:
    """The analysis of a whole site and of each of its sub-sitemaps.

    Site figures and flags are over every page entry. ``index_lastmods`` are the
    lastmods indexes give their children, kept apart from the page entries.
    """

    site: str | None
    figures: Figures
    generation: Generation
    movement: Movement | None
    flags: tuple[Flag, ...]
    segments: tuple[SegmentDispersion, ...]
    index_lastmods: Figures | None
    segmenter: Segmenter = field(default_factory=Segmenter)

    def to_dict(self) -> dict[str, object]:
        """The ``dispersion`` object of ``auditor inspect --json`` (``groupings``: the
        groups of the sub-sitemaps that were split, with their labelling rule)."""
        groupings = {"groupings": self.segmenter.to_dict()} if self.segmenter.groupings else {}
        return {
            **self.figures.to_dict(),
            "generation": self.generation.to_dict(),
            "movement": self.movement.to_dict() if self.movement else None,
            "flag_details": [f.to_dict() for f in self.flags],
            "index_lastmods": self.index_lastmods.to_dict() if self.index_lastmods else None,
            **groupings,
        }


def flag_codes(flags: Iterable[Flag]) -> list[str]:
    """The distinct reason codes of ``flags``, in order."""
    return list(dict.fromkeys(f.code for f in flags))


def analyse(
    inventory: Inventory, previous: pd.DataFrame | None = None, *, now: datetime | None = None
) -> DispersionReport:
    """Analyse an inventory; ``previous`` is an earlier inventory's entries (loc, lastmod)."""
    return analyse_entries(
        inventory.entries, inventory.files, site=inventory.target, previous=previous, now=now
    )


def analyse_entries(
    entries: pd.DataFrame,
    files: Iterable[SitemapFile],
    *,
    site: str | None = None,
    previous: pd.DataFrame | None = None,
    now: datetime | None = None,
) -> DispersionReport:
    """Analyse entries (columns as :func:`auditor.entries_to_dataframe` makes them).

    ``now`` stands in for the fetch time of files the walk did not record.
    """
    files = list(files)
    by_url = {f.url: f for f in files}
    fallback = (now or datetime.now(UTC)).timestamp()
    arrays, file_codes, files_named = _arrays(entries)
    earlier = align_previous(entries, previous) if previous is not None else None
    segmenter = learn_segmenter(
        entries, file_codes, files_named, arrays.seconds, arrays.dated, earlier
    )
    segment_codes, names = _segment_codes(entries, file_codes, files_named, segmenter)
    fetched = np.array(
        [_fetched(by_url.get(sitemap), fallback) for sitemap, _ in names], dtype=np.float64
    )
    fetched_per_entry = fetched[segment_codes] if len(names) else np.zeros(0)

    segments = []
    within = 0
    for code, rows in enumerate(rows_by_code(segment_codes, len(names))):
        sitemap, group = names[code]
        if rows.shape[0] == 0:
            continue
        part = _segment(
            sitemap,
            by_url.get(sitemap),
            arrays.take(rows),
            earlier.take(rows) if earlier is not None else None,
            float(fetched[code]),
        )
        if group is not None:
            material = segmenter.is_material(sitemap, group)
            part = replace(part, group=group, material=material)
        within += part.generation.within
        segments.append(part)
    segments.extend(_empty_segments(files, {s.sitemap for s in segments}, fallback))

    figures = compute_figures(arrays, fetched_per_entry)
    best = max((s.generation for s in segments), key=lambda g: g.within, default=None)
    generation = Generation(
        best.moment if best else None, best.anchor if best else None, within, figures.with_lastmod
    )
    movement = movement_of(arrays, earlier) if earlier is not None else None
    traits = SegmentTraits(
        recent_items=all(_is_recent(s.kind, s.figures) for s in segments) and bool(segments),
        fetched_at=float(fetched.max()) if len(names) else fallback,
    )
    flags = flags_for(figures, arrays, generation, movement, traits)
    return DispersionReport(
        site, figures, generation, movement, flags, tuple(segments), _index_lastmods(files),
        segmenter,
    )  # fmt: skip


def _segment_codes(
    entries: pd.DataFrame, file_codes: np.ndarray, files: list[str], segmenter: Segmenter
) -> tuple[np.ndarray, list[tuple[str, Group | None]]]:
    """Each entry's segment code, and each code's (sub-sitemap, group): the file codes
    as they are where no file was split."""
    if not segmenter.groupings:
        return file_codes, [(name, None) for name in files]
    codes, names = segmenter.codes(file_codes, files, entries["loc"].to_numpy())
    found = [(f, segmenter.group(f, p) if p is not None else None) for f, p in names]
    return codes, found


def _arrays(entries: pd.DataFrame) -> tuple[LastmodArrays, np.ndarray, list[str]]:
    import pandas as pd

    lastmod = entries["lastmod"]
    if not (isinstance(lastmod.dtype, pd.DatetimeTZDtype) and str(lastmod.dtype.tz) == "UTC"):
        lastmod = pd.to_datetime(lastmod, utc=True)  # the inventory's own is UTC already
    instants = lastmod.to_numpy(dtype="datetime64[s]")
    seconds = instants.astype(np.int64)  # years 1..9999 fit
    dated = ~np.isnat(instants)  # the columns' arrays read as they are: no Series made
    invalid = pd.notna(entries["lastmod_raw"].to_numpy()) & ~dated
    date_only = _date_only(entries["lastmod_precision"])
    news = _present(entries["news_publication_date"])
    sitemap = entries["sitemap"]
    if not isinstance(sitemap.dtype, pd.CategoricalDtype):
        sitemap = sitemap.astype("category")
    categorical = sitemap.array
    codes = categorical.codes.astype(np.int64)
    names = [str(c) for c in categorical.categories]
    arrays = LastmodArrays(seconds, dated, date_only, invalid, news)
    return arrays, codes, names


def _present(column: pd.Series) -> np.ndarray:
    """Where ``column`` has a value (``notna``), read off a datetime column's array."""
    import pandas as pd

    if isinstance(column.dtype, pd.DatetimeTZDtype) or column.dtype.kind == "M":
        seconds = column.to_numpy(dtype="datetime64[s]")  # only NaT is NaT in seconds too
        present: np.ndarray = ~np.isnat(seconds)
        return present
    return column.notna().to_numpy()


def _date_only(precision: pd.Series) -> np.ndarray:
    """Where the precision is a date's (year, month or day): read off the categories of the
    inventory's categorical, each value's otherwise."""
    import pandas as pd

    if isinstance(precision.dtype, pd.CategoricalDtype):
        found = [name in _DATE_ONLY for name in precision.cat.categories]
        by_code = np.array([*found, False], dtype=bool)  # code -1 (missing) reads the last
        date_only: np.ndarray = by_code[precision.array.codes]
        return date_only
    return precision.astype(object).isin(_DATE_ONLY).to_numpy()


def _segment(
    name: str,
    file: SitemapFile | None,
    arrays: LastmodArrays,
    earlier: PreviousValues | None,
    fetched_at: float,
) -> SegmentDispersion:
    figures = compute_figures(arrays, fetched_at)
    kind = file.kind if file else "urlset"
    recent = _is_recent(kind, figures)
    generation = generation_share(arrays, _anchors(file, fetched_at), daily=not recent)
    movement = movement_of(arrays, earlier) if earlier is not None else None
    flags = flags_for(
        figures, arrays, generation, movement, SegmentTraits(recent, fetched_at), name
    )
    return SegmentDispersion(name, kind, figures, generation, movement, flags)


def _is_recent(kind: str, figures: Figures) -> bool:
    if kind in _RECENT_KINDS:
        return True
    return figures.urls > 0 and figures.news / figures.urls >= _NEWS_MAJORITY


def _anchors(file: SitemapFile | None, fetched_at: float) -> Mapping[str, float | None]:
    if file is None:
        return {}
    anchors: dict[str, float | None] = {
        "date-header": _header_seconds(file.date_header),
        "last-modified": _header_seconds(file.last_modified_header),
    }
    if file.status is not None:  # fetched over HTTP, not read from a local file
        anchors["fetch-time"] = fetched_at
    return anchors


def _header_seconds(value: str | None) -> float | None:
    parsed = parse_rfc822(value) if value else None
    return parsed.value.timestamp() if parsed else None


def _fetched(file: SitemapFile | None, fallback: float) -> float:
    return file.fetched_at.timestamp() if file else fallback


def _empty_segments(
    files: list[SitemapFile], seen: set[str], fallback: float
) -> list[SegmentDispersion]:
    """Page-listing files that gave no entry: listed, with no verdict of their own."""
    empty = LastmodArrays(*(np.zeros(0, dtype=t) for t in (np.int64, bool, bool, bool, bool)))
    out = []
    for file in files:
        if file.readable and file.kind in _PAGE_KINDS and file.url not in seen:
            figures = compute_figures(empty, _fetched(file, fallback))
            nothing = Generation(None, None, 0, 0)
            out.append(SegmentDispersion(file.url, file.kind, figures, nothing, None, ()))
    return out


def _index_lastmods(files: list[SitemapFile]) -> Figures | None:
    values = [f.index_lastmod for f in files if f.parent is not None]
    if not values:
        return None
    dated = np.array([v is not None for v in values], dtype=bool)
    seconds = np.array([int(v.timestamp()) if v else 0 for v in values], dtype=np.int64)
    zeros = np.zeros(len(values), dtype=bool)
    arrays = LastmodArrays(seconds, dated, zeros, zeros, zeros)
    latest = max(f.fetched_at for f in files).timestamp()
    return compute_figures(arrays, latest)
