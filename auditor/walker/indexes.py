"""What a sitemap index says: its children, dated by the index, and the order they are read in.

:func:`index_records` takes a batch of an index's records: each child is seen by
Google's index rules (:class:`~auditor.walker.indexrules.ChildRules`), judged like any
loc, dated, and kept twice, parsed for the walk and as written for a later reuse.
:func:`next_files` makes them the files to read next, newest first by the lastmod the
index gives them (undated last), each inheriting the chain of indexes that led to it.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from auditor.walker.dates import ParsedDate
from auditor.walker.formats import Record
from auditor.walker.indexrules import ChildRules
from auditor.walker.locs import LocJudge
from auditor.walker.pages import Tally
from auditor.walker.pending import Pending

__all__ = ["index_records", "next_files"]

_EPOCH = datetime.min.replace(tzinfo=UTC)


def index_records(
    batch: list[Record],
    judge: LocJudge,
    tally: Tally,
    written: list[tuple[str, str | None]],
    rules: ChildRules,
    date: Callable[[str, str | None], ParsedDate | None],
) -> None:
    """An index's records: its children (kept as written too, for a later reuse),
    each seen by Google's index rules; ``date`` parses a lastmod (the walk's cache)."""
    tally.records += len(batch)
    for loc, raw, _news in batch:
        if not loc:
            tally.without_loc += 1
            continue
        rules.see(loc)
        if not judge.accepts(loc):
            continue
        parsed = date(raw, "sitemapindex") if raw else None
        if raw and parsed is None:
            tally.invalid += 1
            tally.first_invalid = tally.first_invalid or raw
        tally.children.append((loc, parsed))
        written.append((loc, raw))


def next_files(item: Pending, tally: Tally) -> list[Pending]:
    """An index's children, newest first by their index lastmod (undated last)."""
    if not tally.children:
        return []
    ordered = sorted(tally.children, key=lambda c: c[1].value if c[1] else _EPOCH, reverse=True)
    chain = (*item.chain, item.url)
    return [
        Pending(
            url=loc,
            parent=item.url,
            via_robots=item.via_robots,
            index_lastmod=parsed.value if parsed else None,
            chain=chain,
            extra_origins=item.extra_origins,
        )
        for loc, parsed in ordered
    ]
