"""What the crawl log showed of lastmod over a period, counted per segment: the one place
where the crawler's logged fetches become the counts the scorer and the planner weigh.

A fetch is logged with its sub-sitemap (``crawl_log.sitemap``: the file that listed the
URL in the freshest walk), never with a group. Groups are learned at each audit from its
walk: they can change between runs, and a fetch recorded before any audit has none, so a
group written at record time would go stale and could not be relabelled. The log is keyed
at read time instead, by (file, URL), with the grouping of whoever reads it:

- the files the reader expects split into groups are counted **URL by URL** (each URL's
  compared fetches summed, its newest credible ``dateModified`` check), and
  :meth:`CrawlLogCounts.attributed` adds each URL's counts to its group, labelled by a
  :class:`~auditor.dispersion.segments.Segmenter` as the pages of past runs are;
- every other file is counted **whole**, one row per file, as before: a million-line log
  of unsplit files costs one ``GROUP BY sitemap`` (``tests/benchmarks/bench_crawl_counts.py``).

Which files are read by URL: the planner, those its stored run split (the segmenter it
labels the pages with, so the counts match its segments exactly); an audit, those its
previous run split (it reads the history before it walks: this run's groups are not known
yet). A file first split by this very run has only whole-file counts, which cannot be
told apart by group: they are left out of its groups for that one run and counted from
the next. No index is added: the read filters on ``(site_id, fetched_at)`` as before
(``crawl_log_by_site``), and only the rows of split files are grouped by URL.

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.dispersion.segments import segment_key
from auditor.history.records import instant_text

if TYPE_CHECKING:
    from auditor.dispersion.segments import Segmenter
    from auditor.history.backend import Database

__all__ = ["FIGURES", "CrawlCounts", "CrawlLogCounts", "read_crawl_counts"]


@dataclass
class CrawlCounts:
    """What the crawl log showed of one segment's lastmod over a period: the
    across-fetches counts (as the scorer's across-runs ones) and dateModified checks."""

    compared: int = 0
    changed: int = 0
    advanced: int = 0
    both: int = 0
    interval_days: float = 0.0  # summed over the compared fetches
    dated: int = 0  # fetches whose credible dateModified was compared with lastmod
    agree: int = 0

    @classmethod
    def of(cls, figures: Iterable[float]) -> CrawlCounts:
        """Counts from their figures in :data:`FIGURES` order (floats: sums of columns)."""
        counts = cls()
        for name, value in zip(FIGURES, figures, strict=True):
            setattr(counts, name, float(value) if name == "interval_days" else round(value))
        return counts

    def add(self, other: CrawlCounts) -> None:
        """Add ``other``'s counts to these."""
        for name in FIGURES:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def evidence(self) -> bool:
        """True when the counts hold a comparison or a date check."""
        return bool(self.compared or self.dated)


#: The figures of :class:`CrawlCounts`, in order: the columns of ``CrawlLogCounts.figures``.
FIGURES = tuple(f.name for f in fields(CrawlCounts))


def _no_rows() -> np.ndarray:
    return np.zeros((0, len(FIGURES)))


@dataclass(frozen=True, eq=False)
class CrawlLogCounts:
    """The crawl log's counts over a period: ``keyed`` by segment key (a file counted whole
    is keyed by its URL), and the URL-by-URL counts of the files read so, not attributed
    to a segment yet (arrays: a split file of 500,000 URLs stays a few arrays, and the
    value pickles to a fleet's workers as cheaply)."""

    keyed: Mapping[str, CrawlCounts] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # the files read URL by URL
    file_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    locs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    figures: np.ndarray = field(default_factory=_no_rows)  # a row per URL, FIGURES
    #: The crawl batches the counted fetches came from (``auditor crawled`` runs: see
    #: :mod:`auditor.history.batches`), by id; fetches recorded before batches have none.
    batches: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.keyed) or len(self.locs) > 0

    def attributed(self, segmenter: Segmenter) -> CrawlLogCounts:
        """The counts keyed by the segments of ``segmenter``'s groupings, nothing left by
        URL: each URL's counts go to its group (to its file where the file is not split,
        its URLs summed); a file counted whole that ``segmenter`` splits is left out, its
        counts not being attributable to a group. Keys already a group's are kept, so
        attributing twice changes nothing."""
        split = segmenter.groupings
        found = {key: CrawlCounts(**vars(c)) for key, c in self.keyed.items() if key not in split}
        if len(self.locs):
            codes, names = segmenter.codes(self.file_codes, self.files, self.locs)
            sums = np.zeros((len(names), len(FIGURES)))
            np.add.at(sums, codes, self.figures)
            for (sitemap, pattern), row in zip(names, sums, strict=True):
                key = segment_key(sitemap, pattern)
                found.setdefault(key, CrawlCounts()).add(CrawlCounts.of(row))
        kept = {k: c for k, c in found.items() if c.evidence}
        return CrawlLogCounts(kept, batches=self.batches)


def read_crawl_counts(
    db: Database,
    site_id: int,
    since: datetime,
    until: datetime | None = None,
    by_url: Collection[str] = (),
    *,
    batches: bool = False,
) -> CrawlLogCounts:
    """What the fetches logged since ``since`` (and before ``until``) showed of lastmod:
    per sub-sitemap, URL by URL for the files ``by_url``. A URL's dateModified counts
    once, by its newest check. One query, streamed into arrays: a URL costs a row of each
    array and its string, not an object (``bench_crawl_counts.py``). With ``batches``, a
    second query names the crawl batches of the fetches that gave a comparison or a date
    check (an audit says which batches fed its verdict; about a quarter of the first
    query's time: ``bench_crawl_counts.py``)."""
    where, params = _window(site_id, since, until)
    files = sorted(set(by_url))
    marks = ", ".join("?" * len(files))
    at = f"CASE WHEN sitemap IN ({marks}) THEN loc END" if files else "CAST(NULL AS TEXT)"
    sql = (
        "SELECT sitemap, at_loc, count(n_compared), COALESCE(sum(n_changed), 0),"
        " COALESCE(sum(n_advanced), 0), COALESCE(sum(n_both), 0), COALESCE(sum(days), 0),"
        " count(n_dated), COALESCE(sum(n_agree), 0) FROM ("
        f" SELECT sitemap, {at} AS at_loc, 1 AS n_compared, content_changed AS n_changed,"
        "  lastmod_advanced AS n_advanced, content_changed * lastmod_advanced AS n_both,"
        "  interval_days AS days, NULL AS n_dated, NULL AS n_agree"
        f" FROM crawl_log WHERE {where}"
        "  AND content_changed IS NOT NULL AND lastmod_advanced IS NOT NULL"
        " UNION ALL"
        " SELECT sitemap, at_loc, NULL, NULL, NULL, NULL, NULL, 1, agrees FROM ("
        f"  SELECT sitemap, {at} AS at_loc, date_agrees AS agrees, row_number() OVER"
        "   (PARTITION BY loc ORDER BY fetched_at DESC) AS newest"
        f"  FROM crawl_log WHERE {where} AND date_agrees IS NOT NULL) AS checks"
        " WHERE newest = 1"
        ") AS fetches GROUP BY sitemap, at_loc"
    )
    counts = _counts(db.stream(sql, [*files, *params, *files, *params], size=_BATCH))
    if not batches or not counts:
        return counts
    return replace(counts, batches=_batches(db, where, params))


def _batches(db: Database, where: str, params: list[Any]) -> tuple[int, ...]:
    """The batches of the fetches in ``where`` that gave a comparison or a date check (a
    check since superseded by a newer one of its URL included: its batch's copies are
    what the newer fetches were compared with). One scan, no grouping by URL."""
    sql = (
        f"SELECT DISTINCT batch_id FROM crawl_log WHERE {where} AND batch_id IS NOT NULL"
        " AND ((content_changed IS NOT NULL AND lastmod_advanced IS NOT NULL)"
        " OR date_agrees IS NOT NULL)"
    )
    return tuple(sorted(int(b) for (b,) in db.rows(sql, params)))


#: Rows of the counts' query read at a time into arrays.
_BATCH = 10_000


def _window(site_id: int, since: datetime, until: datetime | None) -> tuple[str, list[Any]]:
    """The WHERE clause of a site's logged fetches in ``[since, until)``, listed somewhere."""
    params: list[Any] = [site_id, instant_text(since)]
    where = "site_id = ? AND fetched_at >= ? AND sitemap IS NOT NULL"
    if until is not None:
        where += " AND fetched_at < ?"
        params.append(instant_text(until))
    return where, params


def _counts(batches: Iterable[Sequence[Sequence[Any]]]) -> CrawlLogCounts:
    """The query's rows (file, URL or None, then :data:`FIGURES`) as counts: a file's
    whole row keyed by it, the URL rows into arrays."""
    keyed: dict[str, CrawlCounts] = {}
    files: dict[str, int] = {}
    codes: list[int] = []
    locs: list[str] = []
    chunks: list[np.ndarray] = []
    for batch in batches:
        figures = np.array([row[2:] for row in batch], dtype=float)
        by_url = np.array([row[1] is not None for row in batch], dtype=bool)
        for row, values in zip(batch, figures, strict=True):
            if row[1] is None:
                keyed[str(row[0])] = CrawlCounts.of(values)
            else:
                codes.append(files.setdefault(str(row[0]), len(files)))
                locs.append(str(row[1]))
        chunks.append(figures[by_url])
    if not locs:
        return CrawlLogCounts(keyed)
    return CrawlLogCounts(
        keyed,
        tuple(files),
        np.array(codes, dtype=np.intp),
        np.array(locs, dtype=object),
        np.concatenate(chunks),
    )
