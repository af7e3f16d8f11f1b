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

__all__ = [
    "FIGURES",
    "ROW_KEY",
    "CrawlCounts",
    "CrawlLogCounts",
    "PendingFetches",
    "read_crawl_counts",
    "read_pending",
]


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
    #: Compared fetches waiting for a walk of the sitemaps made after them to be weighed
    #: against lastmod (:mod:`auditor.crawl.resolve`): in none of the figures above.
    pending: int = 0

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

    @property
    def shown(self) -> bool:
        """True when the counts hold evidence or fetches pending: worth showing."""
        return self.evidence or bool(self.pending)


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
        return CrawlLogCounts({k: c for k, c in found.items() if c.shown}, batches=self.batches)

    def plus(self, other: CrawlLogCounts) -> CrawlLogCounts:
        """These counts and ``other``'s together (a URL in both has two rows: attributing
        sums them)."""
        keyed = {key: CrawlCounts(**vars(c)) for key, c in self.keyed.items()}
        for key, counts in other.keyed.items():
            keyed.setdefault(key, CrawlCounts()).add(counts)
        files = dict(zip(self.files, range(len(self.files)), strict=True))
        for name in other.files:
            files.setdefault(name, len(files))
        recoded = np.array([files[name] for name in other.files], dtype=np.intp)
        return CrawlLogCounts(
            keyed,
            tuple(files),
            np.concatenate([self.file_codes, recoded[other.file_codes]]).astype(np.intp),
            np.concatenate([self.locs, other.locs]),
            np.concatenate([self.figures, other.figures]),
            batches=tuple(sorted({*self.batches, *other.batches})),
        )


def read_crawl_counts(
    db: Database,
    site_id: int,
    since: datetime,
    until: datetime | None = None,
    by_url: Collection[str] = (),
    *,
    batches: bool = False,
    pending: bool = True,
) -> CrawlLogCounts:
    """What the fetches logged since ``since`` (and before ``until``) showed of lastmod:
    per sub-sitemap, URL by URL for the files ``by_url``. A URL's dateModified counts
    once, by its newest check; the compared fetches still pending a walk after them are
    counted as ``pending`` (``pending=False`` leaves them out, for a reader that resolves
    them itself: :meth:`PendingFetches.counted`). One query, streamed into arrays: a URL
    costs a row of each array and its string, not an object (``bench_crawl_counts.py``).
    With ``batches``, a second query names the crawl batches of the fetches that gave a
    comparison or a date check (an audit says which batches fed its verdict)."""
    where, params = _window(site_id, since, until)
    files = sorted(set(by_url))
    marks = ", ".join("?" * len(files))
    at = f"CASE WHEN sitemap IN ({marks}) THEN loc END" if files else "CAST(NULL AS TEXT)"
    judged = "lastmod_advanced IS NOT NULL" + (" OR pending = 1" if pending else "")
    sql = (
        "SELECT sitemap, at_loc, count(n_compared), COALESCE(sum(n_changed), 0),"
        " COALESCE(sum(n_advanced), 0), COALESCE(sum(n_both), 0), COALESCE(sum(days), 0),"
        " count(n_dated), COALESCE(sum(n_agree), 0), count(n_pending) FROM ("
        f" SELECT sitemap, {at} AS at_loc,"
        "  CASE WHEN lastmod_advanced IS NOT NULL THEN 1 END AS n_compared,"
        "  CASE WHEN lastmod_advanced IS NOT NULL THEN content_changed END AS n_changed,"
        "  lastmod_advanced AS n_advanced, content_changed * lastmod_advanced AS n_both,"
        "  CASE WHEN lastmod_advanced IS NOT NULL THEN interval_days END AS days,"
        "  NULL AS n_dated, NULL AS n_agree,"
        "  CASE WHEN lastmod_advanced IS NULL THEN 1 END AS n_pending"
        f" FROM crawl_log WHERE {where}"
        f"  AND content_changed IS NOT NULL AND ({judged})"
        " UNION ALL"
        " SELECT sitemap, at_loc, NULL, NULL, NULL, NULL, NULL, 1, agrees, NULL FROM ("
        f"  SELECT sitemap, {at} AS at_loc, date_agrees AS agrees, row_number() OVER"
        "   (PARTITION BY loc ORDER BY fetched_at DESC) AS newest"
        f"  FROM crawl_log WHERE {where} AND date_agrees IS NOT NULL) AS checks"
        " WHERE newest = 1"
        ") AS fetches GROUP BY sitemap, at_loc"
    )
    counts = _counts(db.stream(sql, [*files, *params, *files, *params], size=_BATCH))
    if not batches or not (counts or pending is False):  # pending ones may be decided
        return counts
    return replace(counts, batches=_batches(db, where, params))


def _batches(db: Database, where: str, params: list[Any]) -> tuple[int, ...]:
    """The batches of the fetches in ``where`` that gave a comparison or a date check (a
    check since superseded by a newer one of its URL included: its batch's copies are
    what the newer fetches were compared with), or a comparison still pending a walk (the
    reading audit's own walk may decide it: :mod:`auditor.crawl.resolve`). One scan, no
    grouping by URL."""
    sql = (
        f"SELECT DISTINCT batch_id FROM crawl_log WHERE {where} AND batch_id IS NOT NULL"
        " AND ((content_changed IS NOT NULL AND (lastmod_advanced IS NOT NULL OR pending = 1))"
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


@dataclass(frozen=True, eq=False)
class PendingFetches:
    """A site's compared fetches still pending a walk after them (``crawl_log.pending``),
    as arrays: what :func:`auditor.crawl.resolve.resolve` judges against a walk, and what
    :meth:`counted` counts once it has. Instants as seconds since the epoch; ``keys``
    and ``fetched`` keep each row's key (:data:`~auditor.history.crawl.ROW_KEY`) and its
    stored ``fetched_at`` text, to find it again with ``loc`` (empty when read without
    keys: :func:`read_pending`)."""

    locs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    fetched: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    fetched_at: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fetched_precision: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    previous_at: np.ndarray = field(default_factory=lambda: np.zeros(0))
    previous_precision: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    sitemaps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
    changed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    interval_days: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return len(self.locs)

    def counted(
        self,
        codes: np.ndarray,
        since: datetime,
        until: datetime | None = None,
        by_url: Collection[str] = (),
    ) -> CrawlLogCounts:
        """What these fetches show of lastmod once judged (``codes``, one each, from
        :func:`~auditor.crawl.resolve.judge`): those fetched in ``[since, until)`` and
        listed somewhere, counted as :func:`read_crawl_counts` counts its rows (with
        ``pending=False``), the ones still pending as ``pending``."""
        from auditor.crawl.resolve import ADVANCED, PENDING

        listed = np.array([s is not None for s in self.sitemaps], dtype=bool)
        keep = (self.fetched_at >= since.timestamp()) & listed
        if until is not None:
            keep &= self.fetched_at < until.timestamp()
        decided, changed = codes >= 0, self.changed
        advanced = codes == ADVANCED
        figures = np.column_stack(
            [decided, decided & changed, advanced, advanced & changed,
             np.where(decided, np.nan_to_num(self.interval_days), 0.0),
             np.zeros(len(codes)), np.zeros(len(codes)), codes == PENDING]
        ).astype(float)  # fmt: skip
        keep &= figures.any(axis=1)
        return _grouped(self.sitemaps[keep], self.locs[keep], figures[keep], by_url)


def _grouped(
    sitemaps: np.ndarray, locs: np.ndarray, figures: np.ndarray, by_url: Collection[str]
) -> CrawlLogCounts:
    """Rows of :data:`FIGURES` as counts: summed by file, by (file, URL) for ``by_url``."""
    import pandas as pd

    split = np.isin(sitemaps, list(by_url)) if by_url else np.zeros(len(locs), dtype=bool)
    frame = pd.DataFrame(figures, columns=list(FIGURES))
    whole = frame[~split].groupby(sitemaps[~split], sort=True).sum()
    sums = whole.to_numpy()
    keyed = {str(name): CrawlCounts.of(row) for name, row in zip(whole.index, sums, strict=True)}
    if not split.any():
        return CrawlLogCounts(keyed)
    by = frame[split].groupby([sitemaps[split], locs[split]], sort=True).sum()
    names = [str(f) for f, _ in by.index]
    files = tuple(dict.fromkeys(names))
    code = {name: i for i, name in enumerate(files)}
    return CrawlLogCounts(
        keyed,
        files,
        np.array([code[name] for name in names], dtype=np.intp),
        np.array([str(loc) for _, loc in by.index], dtype=object),
        by.to_numpy(dtype=float),
    )


#: How a ``crawl_log`` row is found again within a few statements, per dialect (a pending
#: fetch read, then its judgement written back): SQLite's rowid, PostgreSQL's ``ctid``.
#: Either may point elsewhere later (a ``VACUUM``, an update between): a writer checks
#: the row is still the one it read.
ROW_KEY = {"sqlite": "rowid", "postgresql": "ctid::text"}

#: The columns of ``crawl_log`` a pending fetch is read with, in :class:`PendingFetches`'
#: field order.
_PENDING_COLUMNS = (
    "loc, fetched_at, fetched_precision, interval_days, previous_precision, sitemap,"
    " content_changed"
)


def read_pending(
    db: Database, site_id: int, since: datetime | None = None, *, keys: bool = True
) -> PendingFetches:
    """The site's fetches pending a walk (fetched since ``since``, when given), streamed
    into arrays batch by batch (one query, on the ``crawl_log_pending`` index); without
    ``keys``, the rows' ``fetched_at`` texts are not kept (``fetched`` is empty): enough
    to judge and count them, not to write their judgement back."""
    columns = f"{_PENDING_COLUMNS}, {ROW_KEY[db.dialect]}"
    sql = f"SELECT {columns} FROM crawl_log WHERE site_id = ? AND pending = 1"
    params: list[Any] = [site_id]
    if since is not None:
        sql += " AND fetched_at >= ?"
        params.append(instant_text(since))
    shared: dict[Any, Any] = {}  # a file's URL or a precision: one string for all its rows
    parts: list[list[np.ndarray]] = []
    for batch in db.stream(sql, params, size=_BATCH):
        locs, fetched, fetched_p, days, previous_p, sitemaps, changed, keyed = zip(
            *batch, strict=True
        )
        seconds = _seconds(fetched)
        interval = np.array(days, dtype=float)  # None (never, for a compared fetch) as NaN
        parts.append([
            np.array(locs, dtype=object),
            np.array(keyed if keys else (), dtype=object),
            np.array(fetched if keys else (), dtype=object),
            seconds,
            np.array([shared.setdefault(p, p) for p in fetched_p], dtype=object),
            seconds - interval * 86_400,  # the previous good fetch: the interval before
            np.array([shared.setdefault(p, p) for p in previous_p], dtype=object),
            np.array([shared.setdefault(m, m) for m in sitemaps], dtype=object),
            np.array(changed, dtype=bool),
            interval,
        ])  # fmt: skip
    if not parts:
        return PendingFetches()
    return PendingFetches(*(np.concatenate(column) for column in zip(*parts, strict=True)))


def _seconds(texts: Sequence[str]) -> np.ndarray:
    """Stored instants as seconds since the epoch."""
    import pandas as pd

    stamps = pd.to_datetime(pd.Series(texts, dtype=object), utc=True, format="ISO8601")
    micros = stamps.dt.tz_localize(None).to_numpy(dtype="datetime64[us]").astype(np.int64)
    return np.asarray(micros / 1e6)
