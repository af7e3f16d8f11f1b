"""The history as flat tables for exports (``sites``, ``runs``, ``segments``,
``pages``: :mod:`.tables`), whole or in chunks, and the runs' sitemap extension shares,
as methods of :class:`~auditor.history.History` (a mixin).

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from auditor.history.backend import Database
from auditor.history.records import SiteRecord
from auditor.history.tables import CHUNK_ROWS, TABLES, extension_rows, table_chunks, table_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TableHistory"]


class TableHistory:
    """The history's tables for exports (mixed into ``History``: its database and its
    sites)."""

    _db: Database

    def sites(self) -> list[SiteRecord]:
        """Every site (``History`` gives them)."""
        raise NotImplementedError

    def table(self, name: str) -> pd.DataFrame:
        """A flat DataFrame for exports: one of ``sites``, ``runs``, ``segments``, ``pages``."""
        if name not in TABLES:
            raise ValueError(f"no table {name!r}: choose from {', '.join(TABLES)}")
        if name == "sites":
            return table_frame(name, self.sites(), [])
        columns, rows = self._db.described(TABLES[name])
        return table_frame(name, rows, columns)

    def table_chunks(self, name: str, size: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
        """:meth:`table` in chunks of about ``size`` rows, the same columns, types and
        order, never held whole (the sites, a small table, are read whole first)."""
        if name == "sites":
            records = self.sites()
            for start in range(0, len(records), size):
                yield table_frame(name, records[start : start + size], [])
        elif name in TABLES:
            yield from table_chunks(self._db, name, size)
        else:
            raise ValueError(f"no table {name!r}: choose from {', '.join(TABLES)}")

    def extension_shares(self, size: int = CHUNK_ROWS) -> Iterator[list[tuple[Any, ...]]]:
        """Runs whose stored result has sitemap extension shares, in batches, oldest
        first: (run id, site, started_at text, ``dispersion.extensions.by_sitemap`` as
        JSON text), read by the database from the stored JSON in one statement."""
        return extension_rows(self._db, size)
