"""What the trust look-up reads of one site, and the compact form it keeps it in.

Read in one snapshot: the site's latest run (its stored result: the groupings its
sub-sitemaps were split by), its freshest inventory (a plan's walk made after that run,
else the run's ``url_state``, as :meth:`~auditor.history.History.current_inventory_blob`
chooses), the ``latest_site_verdicts`` and ``latest_segment_verdicts`` rows of the site
(each verdict's ``since``), and, when a segment is trusted, the crawl log since the run.

Which segments a crawler may schedule on lastmod is the planner's rule
(:mod:`auditor.planner.make`, ``_segments``): a segment whose latest verdict is
``trusted`` (:func:`~auditor.planner.signal.signal_of` reads it so; a ``partial`` site's
trusted segments too), unless the crawler's fetches logged since that run contradict it
(:func:`~auditor.scorer.rules.contrary_counts`), which the planner reads as untrusted.

The inventory is kept as arrays sorted by each URL's key hash (Python's ``hash`` of
:func:`~auditor.serve.trustkeys.local_key`, stable within the process): a look-up is one
binary search and one string comparison (the key itself, kept in a pyarrow array, about
its length in bytes), never a Python object a URL. Per URL: 8 bytes of hash, the key,
4 of offset, 8 of lastmod and 4 of segment code.

Touches: the database.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from auditor.dispersion.segments import Segmenter, segment_key
from auditor.history.backend import Database
from auditor.history.crawlcounts import CrawlCounts, read_crawl_counts
from auditor.history.records import instant
from auditor.history.state import state_columns
from auditor.planner.signal import signal_of
from auditor.serve.trustkeys import local_keys

__all__ = ["SegmentTrust", "SiteTrust", "SiteVersion", "read_site", "read_version", "recheck_crawl"]

#: (latest run id, the plan walk's walked_at as stored): changes with a new run or walk.
SiteVersion = tuple[int | None, str | None]

_VERSION = (
    "SELECT (SELECT l.id FROM runs l WHERE l.site_id = ?"
    " ORDER BY l.started_at DESC, l.id DESC LIMIT 1),"
    " (SELECT w.walked_at FROM plan_walks w WHERE w.site_id = ?)"
)
_SEGMENTS = (
    "SELECT sitemap, group_pattern, verdict, since, compared, changed, lastmod_advanced,"
    " precision FROM latest_segment_verdicts WHERE site = ?"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NO_LASTMOD = np.iinfo(np.int64).min


@dataclass(frozen=True)
class SegmentTrust:
    """One segment of the latest run as the look-up answers it (``sitemap`` None: the
    URL's inventory row named no sub-sitemap; ``verdict`` None: not judged by that run)."""

    sitemap: str | None
    group: str | None
    verdict: str | None
    since: datetime | None
    trusted: bool  # a crawler may schedule its URLs on lastmod (the planner's rule)
    contradicted: bool = False  # trusted by the audit, contradicted by the crawl log since
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)  # compared, changed, advanced, both


@dataclass(frozen=True, eq=False)
class SiteTrust:
    """One site's latest inventory and segments, compact (module docstring)."""

    site: str
    site_id: int
    version: SiteVersion
    crawl_version: object
    verdict: str | None  # the site's latest verdict and since when (None: never audited)
    since: datetime | None
    started: datetime | None  # the latest run's start (the crawl log is read since)
    walked_at: datetime | None  # when the inventory kept was walked
    groupings: Mapping[str, Any]
    hashes: np.ndarray  # int64, sorted
    keys: pa.Array  # each URL's key, in the hashes' order
    lastmod: np.ndarray  # int64 microseconds since the epoch, the int64 minimum for none
    segment: np.ndarray  # int32 code into ``segments``
    segments: tuple[SegmentTrust, ...]

    @property
    def urls(self) -> int:
        """URLs held."""
        return len(self.hashes)

    def find(self, key: str) -> int | None:
        """The row of the URL of ``key`` (its first, when listed twice), or None."""
        code = hash(key)
        row = int(np.searchsorted(self.hashes, code))
        while row < len(self.hashes) and int(self.hashes[row]) == code:
            if self.keys[row].as_py() == key:
                return row
            row += 1
        return None

    def lastmod_of(self, row: int) -> datetime | None:
        """The lastmod of row ``row``, or None."""
        value = int(self.lastmod[row])
        return None if value == _NO_LASTMOD else _EPOCH + timedelta(microseconds=value)


def read_version(db: Database, site_id: int) -> SiteVersion:
    """The site's :data:`SiteVersion`: two probes of primary keys and ``runs_by_site``."""
    run_id, walked = db.rows(_VERSION, (site_id, site_id))[0]
    return (None if run_id is None else int(run_id), None if walked is None else str(walked))


def read_site(db: Database, site: str, site_id: int, crawl_version: object) -> SiteTrust:
    """Everything the look-up answers ``site``'s URLs from, read in one snapshot."""
    with db.snapshot():
        version = read_version(db, site_id)
        if version[0] is None:
            return _empty(site, site_id, version, crawl_version)
        started_at, text = db.rows("SELECT started_at, result FROM runs WHERE id = ?",
                                   (version[0],))[0]  # fmt: skip
        started = _instant(started_at)
        walked_at, blob = _inventory(db, site_id, started)
        verdicts = db.rows(
            "SELECT verdict, since FROM latest_site_verdicts WHERE site = ?", (site,)
        )
        rows = db.rows(_SEGMENTS, (site,))
        stored = json.loads(text)
        groupings = (stored.get("dispersion") or {}).get("groupings") or {}
        judged = _judged(rows)
        crawl = _crawl(db, site_id, started, groupings, judged)
    verdict, since = (str(verdicts[0][0]), _instant(verdicts[0][1])) if verdicts else (None, None)
    base = SiteTrust(site, site_id, version, crawl_version, verdict, since, started, walked_at,
                     groupings, *_nothing(), ())  # fmt: skip
    return _with_inventory(base, blob, judged, crawl)


def recheck_crawl(db: Database, trust: SiteTrust, crawl_version: object) -> SiteTrust:
    """``trust`` with its segments judged again against the crawl log as it is now (the
    log changed, the site's run and walk did not)."""
    if trust.started is None:
        return replace(trust, crawl_version=crawl_version)
    judged = {segment_key(s.sitemap, s.group): s for s in trust.segments if s.sitemap is not None}
    crawl = _crawl(db, trust.site_id, trust.started, trust.groupings, judged)
    segments = tuple(_ruled(s, crawl) for s in trust.segments)
    return replace(trust, crawl_version=crawl_version, segments=segments)


def _empty(site: str, site_id: int, version: SiteVersion, crawl_version: object) -> SiteTrust:
    return SiteTrust(site, site_id, version, crawl_version, None, None, None, None, {},
                     *_nothing(), ())  # fmt: skip


def _nothing() -> tuple[np.ndarray, pa.Array, np.ndarray, np.ndarray]:
    return (np.zeros(0, np.int64), pa.array([], pa.string()), np.zeros(0, np.int64),
            np.zeros(0, np.int32))  # fmt: skip


def _instant(value: Any) -> datetime:
    """A stored instant (text on SQLite, a timestamp or text on PostgreSQL) in UTC."""
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    return instant(str(value)).astimezone(UTC)


def _inventory(db: Database, site_id: int, started: datetime) -> tuple[datetime, bytes | None]:
    """(when walked, the blob) of the freshest inventory: a plan walk after the run, else
    the run's ``url_state`` (None when none is kept)."""
    walks = db.rows("SELECT walked_at, data FROM plan_walks WHERE site_id = ?", (site_id,))
    if walks and _instant(walks[0][0]) > started:
        return _instant(walks[0][0]), bytes(walks[0][1])
    state = db.rows("SELECT data FROM url_state WHERE site_id = ?", (site_id,))
    return started, bytes(state[0][0]) if state else None


def _judged(rows: Sequence[Sequence[Any]]) -> dict[str, SegmentTrust]:
    """The latest run's segments by segment key, as the audit judged them."""
    found = {}
    for sitemap, group, verdict, since, compared, changed, advanced, precision in rows:
        both = round((precision or 0.0) * int(advanced or 0))
        counts = (int(compared or 0), int(changed or 0), int(advanced or 0), both)
        mode = signal_of(str(verdict), *counts).mode
        found[segment_key(str(sitemap), group)] = SegmentTrust(
            str(sitemap), group, str(verdict), _instant(since), mode == "trusted", False, counts
        )
    return found


def _crawl(
    db: Database,
    site_id: int,
    started: datetime,
    groupings: Mapping[str, Any],
    judged: Mapping[str, SegmentTrust],
) -> Mapping[str, CrawlCounts]:
    """The crawl log's counts per segment since the run (as the planner reads them: the
    files the run split URL by URL, labelled by its groupings); not read when no segment
    is trusted (nothing to contradict)."""
    if not any(s.verdict == "trusted" for s in judged.values()):
        return {}
    segmenter = Segmenter.from_dict(groupings)
    counts = read_crawl_counts(db, site_id, started, None, segmenter.groupings)
    return counts.attributed(segmenter).keyed


def _ruled(segment: SegmentTrust, crawl: Mapping[str, CrawlCounts]) -> SegmentTrust:
    """``segment`` with the planner's rule applied: trusted unless contradicted since."""
    from auditor.scorer.rules import contrary_counts
    from auditor.scorer.tally import crawl_tally

    if segment.verdict != "trusted" or segment.sitemap is None:
        return segment
    found = crawl.get(segment_key(segment.sitemap, segment.group))
    contradicted = found is not None and bool(contrary_counts(crawl_tally(found)))
    trusted = signal_of(segment.verdict, *segment.counts).mode == "trusted" and not contradicted
    return replace(segment, trusted=trusted, contradicted=contradicted)


def _with_inventory(
    base: SiteTrust,
    blob: bytes | None,
    judged: Mapping[str, SegmentTrust],
    crawl: Mapping[str, CrawlCounts],
) -> SiteTrust:
    """``base`` holding the inventory of ``blob``, each URL's segment coded."""
    if blob is None:
        return base
    columns = state_columns(blob)
    files = [*columns.sitemaps, ""]  # "": a row without a sub-sitemap (code -1)
    file_codes = np.where(columns.sitemap_codes < 0, len(files) - 1, columns.sitemap_codes)
    locs = np.asarray(columns.locs, dtype=object)
    codes, names = Segmenter.from_dict(base.groupings).codes(file_codes, files, locs)
    segments = tuple(
        _ruled(judged.get(segment_key(s, g)) or _unjudged(s, g), crawl) for s, g in names
    )
    keys = local_keys(columns.locs)
    hashes = np.fromiter((hash(key) for key in keys), dtype=np.int64, count=len(keys))
    order = np.argsort(hashes, kind="stable")
    return replace(
        base,
        hashes=hashes[order],
        keys=pa.array(keys, pa.string()).take(pa.array(order)),
        lastmod=np.ascontiguousarray(columns.lastmod[order]),
        segment=codes[order].astype(np.int32),
        segments=segments,
    )


def _unjudged(sitemap: str, group: str | None) -> SegmentTrust:
    """A segment the latest run gave no verdict (a sub-sitemap listed since by a plan's
    walk, or none named): planned by rate."""
    return SegmentTrust(sitemap or None, group, None, None, False)
