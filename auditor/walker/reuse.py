"""Re-verification without re-downloading: what a previous walk read, for conditional GETs.

A walk given a :class:`SitemapStore` asks it about each sitemap file before requesting
it. When the store holds the file (:class:`StoredFile`: its previous record, with its
ETag and Last-Modified, and its records), the request carries ``If-None-Match`` /
``If-Modified-Since``; a 304 Not Modified then stands in for reading the file: its
stored records go through the walk exactly as if they had just been read (the same
judging, deduplication against the files read before it, counts and problems), and
its record says ``reused``. A 200 is read as usual. A file the store cannot supply is
requested without validators.

:class:`PreviousRun` is the store made of plain data, a previous run's file records and
its inventory (the history's ``url_state``): it opens no database, so a fleet's workers
get it with their task.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from auditor.http import conditional_headers
from auditor.models import SitemapFile
from auditor.walker.formats import Record

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["REPLAY_BATCH", "PreviousRun", "SitemapStore", "StoredFile", "batched", "reusable"]

#: Records of a reused file handed to the walk at a time.
REPLAY_BATCH = 10_000
#: Problems that mean a read was cut by the transport (not by the file): its records are
#: not the whole file, so they cannot stand in for it.
_CUT = frozenset({"timeout", "http-error"})
_ENTRY_COLUMNS = ("loc", "lastmod_raw", "news_publication_date", "sitemap")


@dataclass(frozen=True)
class StoredFile:
    """A sitemap file as a previous walk read it (picklable).

    ``file`` is its previous record (validators, kind, counts, :class:`FileContent`);
    ``records`` what reading it gave and the walk uses: an urlset's (or feed's) entries
    as ``(loc, lastmod as written, news date)``, an index's children as ``(loc, lastmod
    as written, None)``.
    """

    file: SitemapFile
    records: Sequence[Record]

    @property
    def headers(self) -> dict[str, str]:
        """The conditional request headers of its previous answer."""
        return conditional_headers(self.file.etag, self.file.last_modified_header)


class SitemapStore(Protocol):
    """Where a walk finds what it read of a sitemap file before."""

    def stored(self, url: str) -> StoredFile | None:
        """The file at ``url`` as read before, or None to request it without validators."""
        ...


def reusable(file: SitemapFile) -> bool:
    """True when a file's record can stand in for reading it again: it was read whole
    from a 2xx answer (or reused so), no URL of it went to another file, and it has
    validators to send."""
    content = file.content
    if content is None or file.status is None:
        return False
    if not (200 <= file.status < 300 or file.reused):
        return False
    if content.duplicates or any(code in _CUT for code, _ in content.problems):
        return False
    return bool(conditional_headers(file.etag, file.last_modified_header))


class PreviousRun:
    """A :class:`SitemapStore` of a previous run: its file records and its inventory.

    ``entries`` is the run's inventory as the history keeps it (loc, lastmod_raw,
    news_publication_date and sitemap columns, in the order the walk found them); a
    file's entries are those whose ``sitemap`` is the file. A file whose entries do not
    add up to its record's count, or an inventory without the lastmods as written (an
    older history), is not supplied.
    """

    def __init__(self, files: Iterable[SitemapFile], entries: pd.DataFrame | None) -> None:
        self._files = {f.url: f for f in files if reusable(f)}
        complete = entries is not None and all(c in entries for c in _ENTRY_COLUMNS)
        self._entries = entries if complete else None
        self._rows: dict[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self._files)

    def stored(self, url: str) -> StoredFile | None:
        """The file at ``url`` with its records, or None."""
        file = self._files.get(url)
        if file is None or file.content is None:
            return None
        if file.kind == "sitemapindex":
            return StoredFile(file, [(loc, raw, None) for loc, raw in file.content.children])
        records = self._records(url)
        if records is None or len(records) != file.urls:
            return None
        return StoredFile(file, records)

    def _records(self, url: str) -> list[Record] | None:
        if self._entries is None:
            return None
        if self._rows is None:
            import numpy as np

            by_file = self._entries.groupby("sitemap", observed=True, sort=False)
            self._rows = {str(name): np.asarray(rows) for name, rows in by_file.indices.items()}
        rows = self._rows.get(url)
        if rows is None:
            return []
        part = self._entries.iloc[rows]
        locs = part["loc"].tolist()
        raws = [raw if isinstance(raw, str) else None for raw in part["lastmod_raw"]]
        news = part["news_publication_date"]
        dates = [None] * len(locs) if not news.notna().any() else _texts(news)
        return list(zip(locs, raws, dates, strict=True))


def _texts(news: pd.Series) -> list[str | None]:
    """News dates as W3C text the walker reads back to the same instant."""
    import pandas as pd

    return [None if pd.isna(value) else value.isoformat() for value in news]


def batched(records: Sequence[Record], size: int = REPLAY_BATCH) -> Iterator[list[Record]]:
    """``records`` in lists of at most ``size``."""
    for start in range(0, len(records), size):
        yield list(records[start : start + size])
