"""Writing walked entries as JSONL or CSV, streaming (the ``walk`` command's contract)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, TextIO

from auditor.models import SitemapEntry

if TYPE_CHECKING:
    from auditor.walker.walk import Walk

__all__ = [
    "CSV_COLUMNS",
    "PRECISION_PART",
    "jsonl_lastmod_part",
    "jsonl_line",
    "jsonl_sitemap_end",
    "write_csv",
    "write_jsonl",
    "write_walk_jsonl",
]

CSV_COLUMNS = SitemapEntry._fields
_BATCH = 2_000
_quote = json.encoder.encode_basestring  # the C encoder


_NO_DATE = ', "lastmod": null, "lastmod_precision": null, "lastmod_raw": '
#: The JSONL keys between a lastmod's ISO text and its raw text, by precision.
PRECISION_PART = {
    p: f', "lastmod_precision": "{p}", "lastmod_raw": '
    for p in ("year", "month", "day", "minute", "second", "fraction")
}


def utc_iso(value: datetime, raw: str | None = None) -> str:
    """``value.isoformat()``, taken straight from the raw text when that already is it.

    A UTC stamp written with seconds (``...:05Z``, ``...:05+00:00``) or a date
    (``2026-10-01``) needs only a suffix; anything else is formatted.
    """
    if raw is not None and len(raw) in (10, 20, 25) and (len(raw) == 10 or raw[10] == "T"):
        size = len(raw)
        if size == 25 and raw.endswith("+00:00"):
            return raw
        if size == 20 and raw[19] == "Z":
            return raw[:19] + "+00:00"
        if size == 10:
            return raw + "T00:00:00+00:00"
    return value.isoformat()


def jsonl_lastmod_part(iso: str | None, precision: str | None, raw: str | None) -> str:
    """The lastmod keys of a JSONL line, from ``, "lastmod"`` to the raw text's value.

    ``iso`` is the UTC instant as ``isoformat()`` writes it, None for a lastmod
    that is absent (``raw`` None) or not a date.
    """
    if iso is None or precision is None or raw is None:
        return f"{_NO_DATE}{'null' if raw is None else _quote(raw)}"
    return f', "lastmod": "{iso}"{PRECISION_PART[precision]}{_quote(raw)}'


def jsonl_sitemap_end(sitemap: str, news: datetime | None = None) -> str:
    """The end of a JSONL line: the sitemap key, the news date when there is one, the newline."""
    if news is None:
        return f', "sitemap": {_quote(sitemap)}}}\n'
    return f', "sitemap": {_quote(sitemap)}, "news_publication_date": "{news.isoformat()}"}}\n'


def jsonl_line(entry: SitemapEntry) -> str:
    """One entry's JSONL line, exactly as :func:`write_jsonl` writes it."""
    loc, lastmod, precision, raw, sitemap, news = entry
    iso = None if lastmod is None else utc_iso(lastmod, raw)
    return (
        f'{{"loc": {_quote(loc)}{jsonl_lastmod_part(iso, precision, raw)}'
        f"{jsonl_sitemap_end(sitemap, news)}"
    )


def write_walk_jsonl(walk: Walk, out: TextIO) -> int:
    """``write_jsonl(walk, out)``, byte for byte, without making the entries (the CLI's path).

    The walk hands over its lines in strings of one or more lines each; every line is
    one unique URL, so the count is the walk's.
    """
    write = out.write
    for lines in walk._jsonl_batches():
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
    for loc, lastmod, precision, raw, sitemap, news in entries:
        if sitemap is not last_sitemap:
            last_sitemap, sitemap_end = sitemap, f', "sitemap": {_quote(sitemap)}}}\n'
        if news is not None:
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


def write_csv(entries: Iterable[SitemapEntry], out: TextIO) -> int:
    """Write a header and one CSV row per entry; returns how many rows were written."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    count = 0
    for loc, lastmod, precision, raw, sitemap, news in entries:
        writer.writerow(
            (
                loc,
                utc_iso(lastmod, raw) if lastmod else "",
                precision or "",
                _neutralised(raw or ""),
                sitemap,
                news.isoformat() if news else "",
            )
        )
        count += 1
    return count


def _neutralised(text: str) -> str:
    """A cell from the web that a spreadsheet would run as a formula, made inert."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
