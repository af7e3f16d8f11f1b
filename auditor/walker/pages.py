"""A file's records made into output, URL by URL: the walk's hot loops.

:class:`Pages` holds what every file of a walk shares (the URLs emitted so
far, as 64-bit hashes, and the lastmod caches) and turns one batch of a file's
raw records into :class:`~auditor.models.SitemapEntry` values, or straight
into the JSONL lines ``write_jsonl`` would write for them (the ``walk``
command's path: one loop per URL, no entry made, a lastmod's JSON text built
once per distinct stamp, and a batch of new URLs marked seen in one step).
Both judge, deduplicate and count alike; a file's counts (duplicates, invalid
lastmods...) go to its :class:`Tally`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from operator import add, itemgetter
from typing import TypeVar, cast

from auditor.models import SitemapEntry
from auditor.walker.dates import ParsedDate, parse_rfc822, parse_w3c, w3c_text
from auditor.walker.formats import Record
from auditor.walker.locs import LocJudge
from auditor.walker.output import (
    PRECISION_PART,
    jsonl_lastmod_part,
    jsonl_line,
    jsonl_sitemap_end,
    utc_iso,
)
from auditor.walker.seen import SeenUrls

__all__ = ["PageMaker", "Pages", "Tally"]

T = TypeVar("T")

#: Distinct lastmod texts remembered per syntax; a cache is emptied when full.
DATE_CACHE_SIZE = 16_384
_new_entry = tuple.__new__  # SitemapEntry(...) without the NamedTuple's Python-level __new__
_first = itemgetter(0)
_second = itemgetter(1)
_third = itemgetter(2)
_XML_KINDS = frozenset({"urlset", "rss", "atom"})  # text from XML: no control but tab, LF, CR
_quote = json.encoder.encode_basestring  # the C encoder
_NO_LASTMOD = jsonl_lastmod_part(None, None, None)


@dataclass
class Tally:
    """What one file contributed, gathered while reading it."""

    records: int = 0
    emitted: int = 0
    duplicates: int = 0
    first_duplicate: str = ""
    invalid: int = 0
    first_invalid: str = ""
    without_loc: int = 0
    children: list[tuple[str, ParsedDate | None]] = field(default_factory=list)


def _plain(texts: list[str | None]) -> bool:
    """True when JSON escapes nothing in any of these strings: ``_quote(t)`` is ``f'"{t}"'``.

    One C pass over the batch's locs instead of one encoder call per loc.
    """
    try:
        joined = "".join(texts)  # type: ignore[arg-type]  # None: TypeError
    except TypeError:
        return False
    return len(_quote(joined)) == len(joined) + 2


def _forget_most(
    parts: dict[str | None, str], invalid: set[str], dates: dict[str | None, str]
) -> None:
    """Empty a full cache of lastmod parts, but for the dates (short texts), which repeat."""
    parts.clear()
    if len(dates) <= DATE_CACHE_SIZE // 4:
        parts.update(dates)
    else:
        dates.clear()
    invalid.intersection_update(parts)


def _plain_xml(texts: list[str]) -> bool:
    """:func:`_plain` for texts read from XML, which holds no control character but tab,
    LF and CR: a few ``memchr`` passes instead of the encoder's."""
    joined = "".join(texts)
    return not any(c in joined for c in _JSON_ESCAPED_IN_XML)


_JSON_ESCAPED_IN_XML = ('"', "\\", "\n", "\t", "\r")

#: What turns a batch of one file's records into output: :meth:`Pages.entries` or ``.jsonl``.
PageMaker = Callable[[list[Record], str, LocJudge, Tally, str | None], list[T]]


class Pages:
    """The per-URL work of one walk: judge, deduplicate, date, emit."""

    def __init__(self) -> None:
        self.seen = SeenUrls()  # hash() of each emitted loc: a compact key, not the string
        # lastmod text -> parsed, per syntax: stamps repeat a lot (generation time)
        self._w3c_dates: dict[str, ParsedDate | None] = {}
        self._rss_dates: dict[str, ParsedDate | None] = {}
        # lastmod text -> its JSONL keys, per syntax; valid lastmods only, invalid ones apart
        self._w3c_parts: dict[str, str] = {}
        self._rss_parts: dict[str, str] = {}
        self._w3c_invalid: set[str] = set()
        self._rss_invalid: set[str] = set()
        # lastmod text ("" for none) -> '"' and its JSONL keys; invalid texts also in *_invalid
        self._w3c_quoted: dict[str | None, str] = {}
        self._rss_quoted: dict[str | None, str] = {}
        self._w3c_dates_quoted: dict[str | None, str] = {}  # the short ones, kept when emptied
        self._rss_dates_quoted: dict[str | None, str] = {}

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
        seen.begin(map(hash, filter(None, map(_first, batch))))
        add = seen.add
        cache = self._rss_dates if kind == "rss" else self._w3c_dates
        fast = judge.fast_prefixes
        tally.records += len(batch)
        for loc, raw, news_raw in batch:
            if not loc:
                tally.without_loc += 1
                continue
            if not (fast and loc.startswith(fast)) and not judge.accepts(loc):
                continue
            if not add(hash(loc)):
                tally.duplicates += 1
                tally.first_duplicate = tally.first_duplicate or loc
                continue
            news = self._news_date(news_raw) if news_raw else None
            if not raw:
                emit(_new_entry(SitemapEntry, (loc, None, None, None, sitemap, news)))
                continue
            parsed = cache.get(raw)
            if parsed is None and raw not in cache:
                parsed = self._parse_date(raw, kind, cache)
            if parsed is None:
                tally.invalid += 1
                tally.first_invalid = tally.first_invalid or raw
                emit(_new_entry(SitemapEntry, (loc, None, None, raw, sitemap, news)))
            else:
                emit(_new_entry(SitemapEntry, (loc, parsed[0], parsed[1], raw, sitemap, news)))
        tally.emitted += len(entries)
        return entries

    def jsonl(
        self, batch: list[Record], sitemap: str, judge: LocJudge, tally: Tally, kind: str | None
    ) -> list[str]:
        """:meth:`entries`, as the JSONL line of each entry (the other hot loop).

        A lastmod's part of the line comes from a cache of the text itself, so a
        repeated stamp costs one dict lookup, and a new one in a common shape is
        never formatted from a datetime (:func:`~auditor.walker.dates.w3c_text`).
        """
        end = jsonl_sitemap_end(sitemap)
        locs = list(map(_first, batch))
        news = any(map(_third, batch))
        if not news and kind in _XML_KINDS and self._add_if_all_new(locs, judge.fast_prefixes):
            return self._jsonl_new(batch, locs, end, tally, kind)
        lines: list[str] = []
        emit = lines.append
        seen = self.seen
        seen.begin(map(hash, filter(None, locs)))
        add = seen.add
        parts = self._rss_parts if kind == "rss" else self._w3c_parts
        fast = judge.fast_prefixes
        quote = _quote
        tally.records += len(batch)
        plain = _plain(locs)
        for loc, raw, news_raw in batch:
            if not loc:
                tally.without_loc += 1
                continue
            if not (fast and loc.startswith(fast)) and not judge.accepts(loc):
                continue
            if not add(hash(loc)):
                tally.duplicates += 1
                tally.first_duplicate = tally.first_duplicate or loc
                continue
            if news_raw:  # a news sitemap: the general way
                emit(jsonl_line(self._entry(loc, raw, news_raw, sitemap, kind, tally)))
                continue
            if raw:
                part = parts.get(raw) or self._lastmod_part(raw, kind, tally, parts)
            else:
                part = _NO_LASTMOD
            if plain:
                emit(f'{{"loc": "{loc}"{part}{end}')
            else:
                emit(f'{{"loc": {quote(loc)}{part}{end}')
        tally.emitted += len(lines)
        return lines

    def _jsonl_new(
        self, batch: list[Record], locs: list[str], end: str, tally: Tally, kind: str | None
    ) -> list[str]:
        """The lines of a batch of new, acceptable locs without news dates: built whole.

        No Python step per URL: each distinct new lastmod text is turned into its
        part of the line once (:meth:`_quoted_part`), then the lines are joined in C.
        """
        raws = list(map(_second, batch))
        rss = kind == "rss"
        parts = self._rss_quoted if rss else self._w3c_quoted
        invalid = self._rss_invalid if rss else self._w3c_invalid
        dates = self._rss_dates_quoted if rss else self._w3c_dates_quoted
        distinct = set(raws)
        missing = distinct.difference(parts)
        if missing:
            if len(parts) + len(missing) > DATE_CACHE_SIZE:
                _forget_most(parts, invalid, dates)
                missing = distinct.difference(parts)
            for raw in missing:
                part = parts[raw] = self._quoted_part(raw, kind, invalid)
                if raw is None or len(raw) <= 10:
                    dates[raw] = part
        if not invalid.isdisjoint(distinct):
            tally.invalid += sum(map(invalid.__contains__, raws))
            tally.first_invalid = tally.first_invalid or next(filter(invalid.__contains__, raws))
        tally.records += len(batch)
        tally.emitted += len(batch)
        quoted = map(parts.__getitem__, raws)
        if _plain_xml(locs):
            return ['{"loc": "' + f'{end}{{"loc": "'.join(map(add, locs, quoted)) + end]
        pairs = zip(map(_quote, locs), quoted, strict=True)
        return [f'{{"loc": {q}{part[1:]}{end}' for q, part in pairs]

    def _quoted_part(self, raw: str, kind: str | None, invalid: set[str]) -> str:
        """``"`` and a lastmod's JSONL keys (the loc's closing quote comes first)."""
        if not raw:
            return '"' + _NO_LASTMOD
        text = w3c_text(raw) if kind != "rss" else self._rss_text(raw)
        if text is None:
            invalid.add(raw)
            return '"' + jsonl_lastmod_part(None, None, raw)
        return f'", "lastmod": "{text[0]}"{PRECISION_PART[text[1]]}{_quote(raw)}'

    def _add_if_all_new(self, locs: list[str | None], fast: tuple[str, ...]) -> bool:
        """Mark a batch's locs seen at once, when each is new and on one fast prefix.

        The common case, checked with a few C-level passes over the batch instead
        of a test per URL: every loc is a string on the same allowed prefix (true
        of all when true of the least and the greatest), none repeats within the
        batch and none was seen before. Otherwise nothing is marked: False.
        """
        if not fast or not locs:
            return False
        if None in locs:  # a record without a loc
            return False
        present = cast("list[str]", locs)
        least, greatest = min(present), max(present)
        if not any(least.startswith(p) and greatest.startswith(p) for p in fast):
            return False
        hashes = set(map(hash, locs))
        return len(hashes) == len(locs) and self.seen.add_all_new(hashes)

    def _lastmod_part(self, raw: str, kind: str | None, tally: Tally, parts: dict[str, str]) -> str:
        """A lastmod's JSONL keys on a cache miss, remembered (bounded); an invalid one counted."""
        invalid = self._rss_invalid if kind == "rss" else self._w3c_invalid
        if raw not in invalid:
            text = w3c_text(raw) if kind != "rss" else self._rss_text(raw)
            if text is not None:
                part = jsonl_lastmod_part(text[0], text[1], raw)
                if len(parts) >= DATE_CACHE_SIZE:
                    parts.clear()
                parts[raw] = part
                return part
            if len(invalid) >= DATE_CACHE_SIZE:
                invalid.clear()
            invalid.add(raw)
        tally.invalid += 1
        tally.first_invalid = tally.first_invalid or raw
        return jsonl_lastmod_part(None, None, raw)

    @staticmethod
    def _rss_text(raw: str) -> tuple[str, str] | None:
        """(UTC ISO text, precision) of an RSS pubDate, or None."""
        parsed = parse_rfc822(raw) or parse_w3c(raw)  # some feeds write ISO dates in pubDate
        return None if parsed is None else (utc_iso(parsed.value, raw), parsed.precision)

    def _entry(
        self,
        loc: str,
        raw: str | None,
        news_raw: str,
        sitemap: str,
        kind: str | None,
        tally: Tally,
    ) -> SitemapEntry:
        """One entry of a news sitemap, as :meth:`entries` makes it."""
        news = self._news_date(news_raw)
        parsed = self.date(raw, kind) if raw else None
        if raw and parsed is None:
            tally.invalid += 1
            tally.first_invalid = tally.first_invalid or raw
        if parsed is None:
            return SitemapEntry(loc, None, None, raw or None, sitemap, news)
        return SitemapEntry(loc, parsed.value, parsed.precision, raw, sitemap, news)

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
