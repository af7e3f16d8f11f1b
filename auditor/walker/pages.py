"""A file's records made into entries, URL by URL: the walk's hot loop.

:class:`Pages` holds what every file of a walk shares (the URLs emitted so
far, as 64-bit hashes, and the parsed lastmods) and turns one batch of a file's
raw records into :class:`~auditor.models.SitemapEntry` values; a file's counts
(duplicates, invalid lastmods...) go to its :class:`Tally`. Another output of
the walk makes its own batches through the same :class:`Pages` (a
:data:`PageMaker`: the JSONL lines of :mod:`auditor.walker.jsonl`), so it judges,
deduplicates and counts alike.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import TypeVar, cast

from auditor.models import SitemapEntry
from auditor.walker.dates import ParsedDate, parse_rfc822, parse_w3c
from auditor.walker.extensions import Extensions, RecordExtras
from auditor.walker.formats import Record
from auditor.walker.locs import LocJudge
from auditor.walker.seen import SeenUrls, as_keys, dedup_keys

__all__ = ["DATE_CACHE_SIZE", "REPEATED_MAX", "PageMaker", "Pages", "Tally"]

T = TypeVar("T")

#: Distinct lastmod texts remembered per syntax; a cache is emptied when full.
DATE_CACHE_SIZE = 16_384
#: The already-listed URLs a file keeps by name (``Tally.repeated``), at most: enough for
#: coverage to tell which other sub-sitemaps listed them, and give examples; the count
#: (``duplicates``) is exact whatever it is.
REPEATED_MAX = 1_000
_new_entry = tuple.__new__  # SitemapEntry(...) without the NamedTuple's Python-level __new__
_first = itemgetter(0)


@dataclass
class Tally:
    """What one file contributed, gathered while reading it."""

    records: int = 0
    emitted: int = 0
    duplicates: int = 0
    first_duplicate: str = ""
    #: The first :data:`REPEATED_MAX` URLs already listed (in this file or before).
    repeated: list[str] = field(default_factory=list)
    invalid: int = 0
    first_invalid: str = ""
    without_loc: int = 0
    children: list[tuple[str, ParsedDate | None]] = field(default_factory=list)


#: What turns a batch of one file's records into output: :meth:`Pages.entries`, or
#: :class:`~auditor.walker.jsonl.JsonlLines`.
PageMaker = Callable[[list[Record], str, LocJudge, Tally, str | None], list[T]]


class Pages:
    """The per-URL work of one walk: judge, deduplicate, date, emit."""

    def __init__(self) -> None:
        self.seen = SeenUrls()  # hash() of each emitted loc: a compact key, not the string
        # lastmod text -> parsed, per syntax: stamps repeat a lot (generation time)
        self._w3c_dates: dict[str, ParsedDate | None] = {}
        self._rss_dates: dict[str, ParsedDate | None] = {}

    def entries(
        self, batch: list[Record], sitemap: str, judge: LocJudge, tally: Tally, kind: str | None
    ) -> list[SitemapEntry]:
        """The hot loop: judge, deduplicate, parse dates, make entries.

        Written for speed (it runs once per URL): locals for every lookup, a set
        size check instead of a test and an insert, the date cache read inline.
        """
        entries: list[SitemapEntry] = []
        emit = entries.append
        seen = self.seen
        fast = judge.fast_prefixes
        keys = dedup_keys(list(map(_first, batch)), fast)
        seen.begin(keys)
        add = seen.add
        cache = self._rss_dates if kind == "rss" else self._w3c_dates
        tally.records += len(batch)
        for (loc, raw, news_raw), key in zip(batch, keys, strict=True):
            if not loc:
                tally.without_loc += 1
                continue
            if not (fast and loc.startswith(fast)) and not judge.accepts(loc):
                continue
            if not add(key):
                tally.duplicates += 1
                tally.first_duplicate = tally.first_duplicate or loc
                if len(tally.repeated) < REPEATED_MAX:
                    tally.repeated.append(loc)
                continue
            if news_raw:
                news, ext = self.extras(news_raw)
            else:
                news = ext = None
            if not raw:
                emit(_new_entry(SitemapEntry, (loc, None, None, None, sitemap, news, ext)))
                continue
            parsed = cache.get(raw)
            if parsed is None and raw not in cache:
                parsed = self._parse_date(raw, kind, cache)
            if parsed is None:
                tally.invalid += 1
                tally.first_invalid = tally.first_invalid or raw
                emit(_new_entry(SitemapEntry, (loc, None, None, raw, sitemap, news, ext)))
            else:
                entry = (loc, parsed[0], parsed[1], raw, sitemap, news, ext)
                emit(_new_entry(SitemapEntry, entry))
        tally.emitted += len(entries)
        return entries

    def mark_all_new(
        self,
        locs: Sequence[str | None],
        fast: tuple[str, ...],
        joined: str | None = None,
        unbroken: bool = False,
    ) -> bool:
        """Mark a batch's locs seen at once, when each is new and on one fast prefix.

        The common case, checked with a few C-level passes over the batch instead
        of a test per URL: every loc is a string on the same allowed prefix (true
        of all when true of the least and the greatest), none repeats within the
        batch (by its key: :func:`~auditor.walker.seen.dedup_keys`) and none was
        seen before. Otherwise nothing is marked: False.
        ``joined`` is the locs end to end, when the caller has made it already;
        ``unbroken`` says that the caller found no tab, LF or CR in it.
        """
        if not fast or not locs or not all(locs):  # a record without a loc (None or "")
            return False
        present = cast("Sequence[str]", locs)
        least, greatest = min(present), max(present)
        if not any(least.startswith(p) and greatest.startswith(p) for p in fast):
            return False
        if joined is None:
            joined = "".join(present)
        # each loc its own key (the hot path), or deduplicated by its key (its escapes
        # normalised, a tab or a line break removed)
        keyed = as_keys(joined, unbroken)
        hashes = set(map(hash, locs) if keyed else dedup_keys(locs, fast))
        return len(hashes) == len(locs) and self.seen.add_all_new(hashes)

    def entry(
        self,
        loc: str,
        raw: str | None,
        news_raw: str | RecordExtras,
        sitemap: str,
        kind: str | None,
        tally: Tally,
    ) -> SitemapEntry:
        """One entry, as :meth:`entries` makes it (the general way, for an entry with a
        news date or extensions)."""
        news, ext = self.extras(news_raw)
        parsed = self.date(raw, kind) if raw else None
        if raw and parsed is None:
            tally.invalid += 1
            tally.first_invalid = tally.first_invalid or raw
        if parsed is None:
            return SitemapEntry(loc, None, None, raw or None, sitemap, news, ext)
        return SitemapEntry(loc, parsed.value, parsed.precision, raw, sitemap, news, ext)

    def extras(self, third: str | RecordExtras) -> tuple[datetime | None, Extensions | None]:
        """A record's third field read: its news publication date and its extensions."""
        if isinstance(third, str):
            return self._news_date(third), None
        return (self._news_date(third.news) if third.news else None), third.extensions

    def date(self, raw: str, kind: str | None) -> ParsedDate | None:
        """A lastmod through its syntax's cache (the hot loop inlines this)."""
        cache = self._rss_dates if kind == "rss" else self._w3c_dates
        parsed = cache.get(raw)
        if parsed is None and raw not in cache:
            parsed = self._parse_date(raw, kind, cache)
        return parsed

    def _parse_date(
        self, raw: str, kind: str | None, cache: dict[str, ParsedDate | None]
    ) -> ParsedDate | None:
        """Parse a lastmod for this kind of file, and remember it (bounded)."""
        parsed = parse_rfc822(raw) if kind == "rss" else parse_w3c(raw)
        if parsed is None and kind == "rss":
            parsed = parse_w3c(raw)  # some feeds write ISO dates in pubDate
        if len(cache) >= DATE_CACHE_SIZE:
            cache.clear()
        cache[raw] = parsed
        return parsed

    def _news_date(self, raw: str) -> datetime | None:
        parsed = self.date(raw, "urlset")
        return None if parsed is None else parsed[0]
