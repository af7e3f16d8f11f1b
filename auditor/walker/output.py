"""The ``walk`` command's two formats, streaming: JSON Lines and CSV.

JSON Lines is written by :mod:`auditor.walker.jsonl` (re-exported here:
:func:`write_walk_jsonl` for a walk, :func:`write_jsonl` for entries); CSV here.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

from auditor.models import SitemapEntry
from auditor.walker.dates import utc_iso
from auditor.walker.jsonl import jsonl_line, write_jsonl, write_walk_jsonl

__all__ = ["CSV_COLUMNS", "jsonl_line", "write_csv", "write_jsonl", "write_walk_jsonl"]

CSV_COLUMNS = SitemapEntry._fields


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
