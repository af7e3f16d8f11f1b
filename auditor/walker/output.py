"""The ``walk`` command's two formats, streaming: JSON Lines and CSV.

JSON Lines is written by :mod:`auditor.walker.jsonl` (re-exported here:
:func:`write_walk_jsonl` for a walk, :func:`write_jsonl` for entries); CSV here.

Touches: nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from auditor.models import Extensions, SitemapEntry
from auditor.walker.dates import utc_iso
from auditor.walker.jsonl import jsonl_line, write_jsonl, write_walk_jsonl

__all__ = [
    "CSV_COLUMNS",
    "CSV_EXTENSION_COLUMNS",
    "jsonl_line",
    "write_csv",
    "write_jsonl",
    "write_walk_jsonl",
]

#: The CSV's columns (the entry's fields but its extensions).
CSV_COLUMNS = SitemapEntry._fields[:-1]
#: The columns ``extensions=True`` adds, after those (empty cells where an entry has none).
CSV_EXTENSION_COLUMNS = (
    "news_title",
    "news_language",
    "hreflang_count",
    "hreflang",
    "image_count",
    "first_image",
    "video_count",
)
_NO_EXTENSIONS = ("",) * len(CSV_EXTENSION_COLUMNS)


def write_csv(entries: Iterable[SitemapEntry], out: TextIO, *, extensions: bool = False) -> int:
    """Write a header and one CSV row per entry; returns how many rows were written.

    A CSV's header comes before its first row, so the extension columns
    (:data:`CSV_EXTENSION_COLUMNS`) are written when asked for (``extensions``), not
    found: without them the output is what it always was.
    """
    import csv  # here: a JSONL walk never loads it

    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS + CSV_EXTENSION_COLUMNS if extensions else CSV_COLUMNS)
    count = 0
    for loc, lastmod, precision, raw, sitemap, news, ext in entries:
        row: tuple[str, ...] = (
            loc,
            utc_iso(lastmod, raw) if lastmod else "",
            precision or "",
            _neutralised(raw or ""),
            sitemap,
            news.isoformat() if news else "",
        )
        if extensions:
            row += _extension_cells(ext) if ext is not None else _NO_EXTENSIONS
        writer.writerow(row)
        count += 1
    return count


def _extension_cells(ext: Extensions) -> tuple[str, ...]:
    """An entry's extension cells; ``hreflang`` as the JSONL key's JSON array."""
    links = json.dumps([{"hreflang": lang, "href": href} for lang, href in ext.hreflang])
    return (
        _neutralised(ext.news_title or ""),
        _neutralised(ext.news_language or ""),
        str(ext.hreflang_count) if ext.hreflang_count else "",
        links if ext.hreflang_count else "",
        str(ext.image_count) if ext.image_count else "",
        _neutralised(ext.first_image or "") if ext.image_count else "",
        str(ext.video_count) if ext.video_count else "",
    )


def _neutralised(text: str) -> str:
    """A cell from the web that a spreadsheet would run as a formula, made inert."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
