"""A walk as JSON Lines: one object per unique URL, the ``walk`` command's contract.

The entry point is :func:`write_walk_jsonl`: it streams a :class:`~auditor.walker.Walk`
to a text stream without making a :class:`~auditor.models.SitemapEntry` for any URL.
:func:`write_jsonl` writes entries already made (the library's path, and the
reference: both write the same bytes), :func:`jsonl_line` one entry's line.

Inside, :class:`JsonlLines` turns each batch of a file's records into lines, sharing
the walk's :class:`~auditor.walker.pages.Pages` (the URLs seen, the parsed dates) so
that it judges, deduplicates and counts as the entries do. Its two loops:

- a batch of new, acceptable locs (the common case) is written whole: each distinct
  new lastmod text is made into its part of the line once, then the lines are
  joined in C, with no Python step per URL;
- any other batch, URL by URL, a lastmod's part of the line read from a cache of
  its text, so a repeated stamp costs one dict lookup.

Strings go through the C JSON encoder; constant parts are built once.

Touches: nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress, repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any, TextIO, cast

from auditor.models import Extensions, SitemapEntry
from auditor.walker import pages as _pages  # DATE_CACHE_SIZE read when used (tests shrink it)
from auditor.walker.dates import parse_rfc822, parse_w3c, utc_iso, w3c_text
from auditor.walker.formats import Record
from auditor.walker.locs import LocJudge
from auditor.walker.pages import Pages, Tally
from auditor.walker.seen import dedup_keys

if TYPE_CHECKING:
    from datetime import datetime

    from auditor.walker.extensions import RecordExtras
    from auditor.walker.walk import Walk

__all__ = ["jsonl_line", "write_jsonl", "write_walk_jsonl"]

_BATCH = 2_000  # entries joined per write by write_jsonl
_quote = json.encoder.encode_basestring  # the C encoder
_first = itemgetter(0)
_XML_KINDS = frozenset({"urlset", "rss", "atom"})  # text from XML: no control but tab, LF, CR

_NO_DATE = ', "lastmod": null, "lastmod_precision": null, "lastmod_raw": '
#: The JSONL keys between a lastmod's ISO text and its raw text, by precision.
PRECISION_PART = {
    p: f', "lastmod_precision": "{p}", "lastmod_raw": '
    for p in ("year", "month", "day", "minute", "second", "fraction")
}


def jsonl_lastmod_part(iso: str | None, precision: str | None, raw: str | None) -> str:
    """The lastmod keys of a JSONL line, from ``, "lastmod"`` to the raw text's value.

    ``iso`` is the UTC instant as ``isoformat()`` writes it, None for a lastmod
    that is absent (``raw`` None) or not a date.
    """
    if iso is None or precision is None or raw is None:
        return f"{_NO_DATE}{'null' if raw is None else _quote(raw)}"
    return f', "lastmod": "{iso}"{PRECISION_PART[precision]}{_quote(raw)}'


_NO_LASTMOD = jsonl_lastmod_part(None, None, None)
# '"' + jsonl_lastmod_part(iso, precision, raw) for a raw text JSON does not escape, in pieces
_ISO, _PRECISION, _RAW = '", "lastmod": "', '", "lastmod_precision": "', '", "lastmod_raw": "'
_LINE_START = '{"loc": "'
_QUOTED_NO_LASTMOD = '"' + _NO_LASTMOD


def jsonl_sitemap_end(
    sitemap: str, news: datetime | None = None, ext: Extensions | None = None
) -> str:
    """The end of a JSONL line: the sitemap key, the news date when there is one, the
    extensions' keys when there are any, the newline."""
    extra = jsonl_extension_part(ext) if ext is not None else ""
    if news is None:
        return f', "sitemap": {_quote(sitemap)}{extra}}}\n'
    return (
        f', "sitemap": {_quote(sitemap)}, "news_publication_date": "{news.isoformat()}"{extra}}}\n'
    )


def jsonl_extension_part(ext: Extensions) -> str:
    """The optional extension keys of a line, each only where the entry has it:
    ``news_title``, ``news_language``, ``hreflang_count`` with ``hreflang`` (the first
    50 alternates, ``{"hreflang", "href"}`` each), ``image_count`` with ``first_image``,
    ``video_count``."""
    parts = []
    if ext.news_title is not None:
        parts.append(f', "news_title": {_quote(ext.news_title)}')
    if ext.news_language is not None:
        parts.append(f', "news_language": {_quote(ext.news_language)}')
    if ext.hreflang_count:
        links = ", ".join(
            f'{{"hreflang": {_quote(lang)}, "href": {_quote(href)}}}' for lang, href in ext.hreflang
        )
        parts.append(f', "hreflang_count": {ext.hreflang_count}, "hreflang": [{links}]')
    if ext.image_count:
        first = "null" if ext.first_image is None else _quote(ext.first_image)
        parts.append(f', "image_count": {ext.image_count}, "first_image": {first}')
    if ext.video_count:
        parts.append(f', "video_count": {ext.video_count}')
    return "".join(parts)


def jsonl_line(entry: SitemapEntry) -> str:
    """One entry's JSONL line, exactly as :func:`write_jsonl` writes it."""
    loc, lastmod, precision, raw, sitemap, news, ext = entry
    iso = None if lastmod is None else utc_iso(lastmod, raw)
    return (
        f'{{"loc": {_quote(loc)}{jsonl_lastmod_part(iso, precision, raw)}'
        f"{jsonl_sitemap_end(sitemap, news, ext)}"
    )


def write_walk_jsonl(walk: Walk, out: TextIO) -> int:
    """``write_jsonl(walk, out)``, byte for byte, without making the entries (the CLI's path).

    Iterates the walk (once). The lines come in strings of one or more lines each;
    every line is one unique URL, so the count returned is the walk's.
    """
    write = out.write
    for lines in walk._made(JsonlLines):
        write("".join(lines) if len(lines) > 1 else lines[0] if lines else "")
    return walk.urls


def write_jsonl(entries: Iterable[SitemapEntry], out: TextIO) -> int:
    """Write one JSON object per entry; returns how many were written.

    Hand-formatted rather than ``json.dumps`` per record (several times faster):
    strings go through the C encoder, constant parts are built once.
    """
    lines: list[str] = []
    last_sitemap = None
    sitemap_end = ""
    count = 0
    append = lines.append
    for loc, lastmod, precision, raw, sitemap, news, ext in entries:
        if sitemap is not last_sitemap:
            last_sitemap, sitemap_end = sitemap, f', "sitemap": {_quote(sitemap)}}}\n'
        if ext is not None:
            end = jsonl_sitemap_end(sitemap, news, ext)
        elif news is not None:
            sitemap_part = sitemap_end[:-2]
            end = f'{sitemap_part}, "news_publication_date": "{news.isoformat()}"}}\n'
        else:
            end = sitemap_end
        if lastmod is not None and raw is not None and precision is not None:
            if len(raw) == 25 and raw[19:] == "+00:00" and raw[10] == "T":
                iso = raw  # already what isoformat() would write
            else:
                iso = utc_iso(lastmod, raw)
            append(
                f'{{"loc": {_quote(loc)}, "lastmod": "{iso}"'
                f"{PRECISION_PART[precision]}{_quote(raw)}{end}"
            )
        elif raw is None:
            append(f'{{"loc": {_quote(loc)}{_NO_DATE}null{end}')
        else:
            append(f'{{"loc": {_quote(loc)}{_NO_DATE}{_quote(raw)}{end}')
        if len(lines) >= _BATCH:
            count += len(lines)
            out.write("".join(lines))
            lines.clear()
    count += len(lines)
    out.write("".join(lines))
    return count


def _plain(texts: list[str | None]) -> bool:
    """True when JSON escapes nothing in any of these strings: ``_quote(t)`` is ``f'"{t}"'``.

    One C pass over the batch's locs instead of one encoder call per loc.
    """
    try:
        joined = "".join(texts)  # type: ignore[arg-type]  # None: TypeError
    except TypeError:
        return False
    return len(_quote(joined)) == len(joined) + 2


def _joined(texts: Sequence[str | None]) -> str | None:
    """The texts end to end, None when one of them is None."""
    try:
        return "".join(texts)  # type: ignore[arg-type]  # None: TypeError
    except TypeError:
        return None


def _plain_xml(joined: str) -> bool:
    """:func:`_plain` for texts read from XML (``joined``: end to end), which hold no
    control character but tab, LF and CR: a few ``memchr`` passes instead of the encoder's
    (written out: no generator per batch)."""
    return not (
        '"' in joined or "\\" in joined or "\n" in joined or "\t" in joined or "\r" in joined
    )


def _forget_most(
    parts: dict[str | None, str], invalid: set[str], dates: dict[str | None, str]
) -> None:
    """Empty a full cache of lastmod parts, but for the dates (short texts), which repeat."""
    parts.clear()
    if len(dates) <= _pages.DATE_CACHE_SIZE // 4:
        parts.update(dates)
    else:
        dates.clear()
    invalid.intersection_update(parts)


class JsonlLines:
    """The JSONL lines of a walk's batches (a :data:`~auditor.walker.pages.PageMaker`).

    Judges, deduplicates and counts as :meth:`Pages.entries <auditor.walker.pages.Pages.entries>`
    does, through the same ``pages``; keeps its own caches of lastmod texts made into
    their part of a line, per syntax.
    """

    def __init__(self, pages: Pages) -> None:
        self._pages = pages
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

    def __call__(
        self, batch: list[Record], sitemap: str, judge: LocJudge, tally: Tally, kind: str | None
    ) -> list[str]:
        """The JSONL line of each entry :meth:`Pages.entries` would make of ``batch``.

        A lastmod's part of the line comes from a cache of the text itself, so a
        repeated stamp costs one dict lookup, and a new one in a common shape is
        never formatted from a datetime (:func:`~auditor.walker.dates.w3c_text`).
        """
        end = jsonl_sitemap_end(sitemap)
        if kind in _XML_KINDS and batch:
            made = self._all_new(batch, sitemap, judge, tally, kind, end)
            if made is not None:
                return made
        locs = list(map(_first, batch))
        pages = self._pages
        lines: list[str] = []
        emit = lines.append
        seen = pages.seen
        fast = judge.fast_prefixes
        keys = dedup_keys(locs, fast)
        seen.begin(keys)
        add_seen = seen.add
        parts = self._rss_parts if kind == "rss" else self._w3c_parts
        quote = _quote
        tally.records += len(batch)
        plain = _plain(locs)
        for (loc, raw, news_raw), key in zip(batch, keys, strict=True):
            if not loc:
                tally.without_loc += 1
                continue
            if not (fast and loc.startswith(fast)) and not judge.accepts(loc):
                continue
            if not add_seen(key):
                tally.duplicates += 1
                tally.first_duplicate = tally.first_duplicate or loc
                if len(tally.repeated) < _pages.REPEATED_MAX:
                    tally.repeated.append(loc)
                continue
            if news_raw:  # a news date or extensions: the general way
                emit(jsonl_line(pages.entry(loc, raw, news_raw, sitemap, kind, tally)))
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

    def _all_new(
        self,
        batch: list[Record],
        sitemap: str,
        judge: LocJudge,
        tally: Tally,
        kind: str | None,
        end: str,
    ) -> list[str] | None:
        """The lines of a batch read from XML when its locs are all new and acceptable
        (:meth:`Pages.mark_all_new <auditor.walker.pages.Pages.mark_all_new>` marks them
        seen); None, nothing marked, when they are not."""
        columns: Iterator[tuple[Any, ...]] = zip(*batch, strict=True)  # one C pass
        locs, raws, thirds = columns
        joined = _joined(locs)  # one copy of the batch's locs for every check of them
        # no JSON escape (so no tab nor line break either, which the keys check too)
        plain = joined is not None and _plain_xml(joined)
        fast = judge.fast_prefixes
        if joined is None or not self._pages.mark_all_new(locs, fast, joined, plain):
            return None
        ends = self._ends(thirds, sitemap, end)
        return self._new_lines(locs, raws, plain, end, ends, tally, kind)

    def _ends(
        self, thirds: Sequence[str | RecordExtras | None], sitemap: str, end: str
    ) -> list[str] | None:
        """The end of each record's line when some record (``thirds``: their third
        fields) has a news date or extensions (theirs: their keys, then the newline);
        None when none has."""
        if not any(thirds):
            return None
        extras = self._pages.extras
        ends = [end] * len(thirds)
        for i in compress(range(len(thirds)), thirds):
            ends[i] = jsonl_sitemap_end(sitemap, *extras(cast("str | RecordExtras", thirds[i])))
        return ends

    def _new_lines(
        self,
        locs: Sequence[str],
        raws: Sequence[str | None],
        plain: bool,
        end: str,
        ends: list[str] | None,
        tally: Tally,
        kind: str | None,
    ) -> list[str]:
        """The lines of a batch of new, acceptable locs: built whole.

        No Python step per URL: each distinct new lastmod text is turned into its
        part of the line once, then the lines are joined in C, in one copy of the
        locs when JSON escapes none of them (``plain``), else each quoted.
        ``ends`` is each line's end when some differ (news dates, extensions), else
        None: every line ends with ``end``.
        """
        rss = kind == "rss"
        parts = self._rss_quoted if rss else self._w3c_quoted
        invalid = self._rss_invalid if rss else self._w3c_invalid
        dates = self._rss_dates_quoted if rss else self._w3c_dates_quoted
        distinct = set(raws)
        missing = distinct.difference(parts)
        if missing:
            if len(parts) + len(missing) > _pages.DATE_CACHE_SIZE:
                _forget_most(parts, invalid, dates)
                missing = distinct.difference(parts)
            text_of = _rss_text if rss else w3c_text
            joined = _joined(list(missing))  # JSON escapes none of them: written as they are
            plain_raws = joined is not None and _plain_xml(joined)
            for raw in missing:  # the loc's closing quote, then the lastmod's keys
                if not raw:
                    part = _QUOTED_NO_LASTMOD
                elif (text := text_of(raw)) is None:
                    invalid.add(raw)
                    part = '"' + jsonl_lastmod_part(None, None, raw)
                elif plain_raws:  # one format, no lookup nor encoder call
                    iso, precision = text
                    part = f'{_ISO}{iso}{_PRECISION}{precision}{_RAW}{raw}"'
                else:
                    part = f'", "lastmod": "{text[0]}"{PRECISION_PART[text[1]]}{_quote(raw)}'
                parts[raw] = part
                if raw is None or len(raw) <= 10:
                    dates[raw] = part
        if not invalid.isdisjoint(distinct):
            tally.invalid += sum(map(invalid.__contains__, raws))
            first = next(filter(invalid.__contains__, raws))  # a text: invalid holds no None
            tally.first_invalid = tally.first_invalid or first or ""
        tally.records += len(locs)
        tally.emitted += len(locs)
        if plain:
            # '{"loc": "', then per line its loc, its lastmod part and the end with the
            # next line's start (the last: the end alone), made in one join
            pieces = [end + _LINE_START] * (3 * len(locs) + 1)
            pieces[0], pieces[-1] = _LINE_START, end
            pieces[1::3] = locs
            pieces[2::3] = map(parts.__getitem__, raws)
            if ends is not None:
                pieces[3::3] = map(add, ends, repeat(_LINE_START))
                pieces[-1] = ends[-1]
            return ["".join(pieces)]
        triples = zip(
            map(_quote, locs), map(parts.__getitem__, raws), ends or [end] * len(locs), strict=True
        )
        return [f'{{"loc": {q}{part[1:]}{line_end}' for q, part, line_end in triples]

    def _lastmod_part(self, raw: str, kind: str | None, tally: Tally, parts: dict[str, str]) -> str:
        """A lastmod's JSONL keys on a cache miss, remembered (bounded); an invalid one counted."""
        invalid = self._rss_invalid if kind == "rss" else self._w3c_invalid
        if raw not in invalid:
            text = w3c_text(raw) if kind != "rss" else _rss_text(raw)
            if text is not None:
                part = jsonl_lastmod_part(text[0], text[1], raw)
                if len(parts) >= _pages.DATE_CACHE_SIZE:
                    parts.clear()
                parts[raw] = part
                return part
            if len(invalid) >= _pages.DATE_CACHE_SIZE:
                invalid.clear()
            invalid.add(raw)
        tally.invalid += 1
        tally.first_invalid = tally.first_invalid or raw
        return jsonl_lastmod_part(None, None, raw)


def _rss_text(raw: str) -> tuple[str, str] | None:
    """(UTC ISO text, precision) of an RSS pubDate, or None."""
    parsed = parse_rfc822(raw) or parse_w3c(raw)  # some feeds write ISO dates in pubDate
    return None if parsed is None else (utc_iso(parsed.value, raw), parsed.precision)
