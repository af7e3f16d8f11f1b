"""History tables as flat DataFrames, for exports (CSV, Parquet, JSON): whole, or streamed
in chunks of rows.

Every column's type is known up front (:func:`table_dtypes`, from the fields of the
values the tables hold), so a chunk whose column is all null keeps its type: instants as
UTC ``datetime64[us]``, flags as nullable booleans, simhashes as ``UInt64``, other
integers ``Int64``, reals ``Float64``, text ``string``.

Touches: the database.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import fields
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from auditor.history.records import RunRecord, SiteRecord
from auditor.history.rows import EXPORT_PAGE_COLUMNS, SEGMENT_COLUMNS
from auditor.scorer.result import PageObservation, SegmentVerdict

if TYPE_CHECKING:
    import pandas as pd

    from auditor.history.backend import Database

__all__ = [
    "CHUNK_ROWS",
    "TABLES",
    "TABLE_COLUMNS",
    "column_dtype",
    "extension_rows",
    "table_chunks",
    "table_dtypes",
    "table_frame",
]

#: Rows of a streamed chunk (about: pages and segments come a batch of runs at a time).
CHUNK_ROWS = 50_000
_FROM_RUNS = " FROM runs r JOIN sites s ON s.id = r.site_id"
_RUN_ORDER = "ORDER BY r.started_at, r.id"
_RUNS = (
    "SELECT r.id AS run_id, s.origin AS site, r.started_at, r.finished_at, r.verdict,"
    f" r.recheck_days{_FROM_RUNS} {_RUN_ORDER}"
)
_SEGMENT_SELECT = (
    "SELECT g.run_id, s.origin AS site, "
    + ", ".join(f"g.{name}" for name in SEGMENT_COLUMNS)
    + " FROM segments g JOIN runs r ON r.id = g.run_id JOIN sites s ON s.id = r.site_id"
)
_SEGMENTS = f"{_SEGMENT_SELECT} ORDER BY r.started_at, g.run_id, g.position"
_PAGE_SELECT = (
    "SELECT p.run_id, s.origin AS site, "
    + ", ".join(f"p.{name}" for name in EXPORT_PAGE_COLUMNS)
    + " FROM pages p JOIN runs r ON r.id = p.run_id JOIN sites s ON s.id = r.site_id"
)
_PAGES = f"{_PAGE_SELECT} ORDER BY r.started_at, p.run_id, p.position"
#: The exportable tables and the query of each ("sites" is built from the site records).
TABLES: dict[str, str] = {"sites": "", "runs": _RUNS, "segments": _SEGMENTS, "pages": _PAGES}
#: Each table's columns, in order.
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "sites": tuple(f.name for f in fields(SiteRecord)),
    "runs": tuple(f.name for f in fields(RunRecord)),
    "segments": ("run_id", "site", *SEGMENT_COLUMNS),
    "pages": ("run_id", "site", *EXPORT_PAGE_COLUMNS),
}
#: Pages and segments are read for a batch of runs at a time (in the runs' order, each
#: batch by the ``(run_id, position)`` keys): the query's rows a run, about.
_ROWS_A_RUN = {"segments": 2, "pages": 20}
_MAX_RUNS_A_BATCH = 5_000  # placeholders of one statement (SQLite allows 32,766)
_BATCH_SELECT = {"segments": (_SEGMENT_SELECT, "g"), "pages": (_PAGE_SELECT, "p")}

INSTANT = "datetime64[us, UTC]"
#: Python types of the values' fields to the columns' pandas types (text otherwise).
_DTYPES: dict[type, str] = {bool: "boolean", int: "Int64", float: "Float64", datetime: INSTANT}
#: The simhash: unsigned 64-bit, stored signed (through a float it would lose low bits).
_UNSIGNED = frozenset({"fp_simhash"})


@cache
def _field_types() -> dict[str, type]:
    found: dict[str, type] = {"run_id": int, "position": int}
    for kind in (PageObservation, SegmentVerdict, SiteRecord, RunRecord):
        for name, hint in typing.get_type_hints(kind).items():
            found.setdefault(name, _plain_type(hint))
    return found


def _plain_type(hint: Any) -> type:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    return hint if isinstance(hint, type) else object


def column_dtype(name: str) -> str:
    """The pandas type of a column of the exported tables."""
    if name in _UNSIGNED:
        return "UInt64"
    return _DTYPES.get(_field_types().get(name, str), "string")


def table_dtypes(name: str) -> dict[str, str]:
    """Each column of table ``name`` and its pandas type, in order."""
    return {column: column_dtype(column) for column in TABLE_COLUMNS[name]}


def table_frame(name: str, rows: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
    """The DataFrame of a table's rows (of ``sites``: its :class:`SiteRecord` values),
    typed by :func:`column_dtype`, column by column (no work a row)."""
    import pandas as pd

    if name == "sites":
        columns = TABLE_COLUMNS["sites"]
        rows = [tuple(getattr(row, column) for column in columns) for row in rows]
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    return pd.DataFrame(
        {column: _column(column, data) for column, data in zip(columns, values, strict=True)}
    )


def _column(name: str, values: Sequence[Any]) -> Any:
    import pandas as pd

    dtype = column_dtype(name)
    if dtype == INSTANT:
        parsed = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601")
        return parsed.astype(pd.api.types.pandas_dtype(INSTANT))
    if dtype == "UInt64":
        return _unsigned(values)
    typed: Any = pd.api.types.pandas_dtype(dtype)  # Int64, Float64, boolean or string
    return pd.array(values, dtype=typed)


def _unsigned(values: Sequence[Any]) -> Any:
    """Signed 64-bit values (None for null) as ``UInt64``: their two's complement bits."""
    import numpy as np
    import pandas as pd

    signed = pd.array(values, dtype="Int64")
    bits = signed.to_numpy(dtype=np.int64, na_value=0).view(np.uint64)
    return pd.arrays.IntegerArray(bits, signed.isna())


def table_chunks(db: Database, name: str, size: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """Table ``runs``, ``segments`` or ``pages`` in chunks of about ``size`` rows, in
    :data:`TABLES`' order, read in one snapshot (PostgreSQL: server-side cursors), so
    the table is never held whole."""
    with db.snapshot():
        if name == "runs":
            columns = TABLE_COLUMNS[name]
            for rows in db.stream(_RUNS, (), size):
                yield table_frame(name, rows, columns)
            return
        yield from _by_runs(db, name, size)


def _by_runs(db: Database, name: str, size: int) -> Iterator[pd.DataFrame]:
    select, alias = _BATCH_SELECT[name]
    runs = max(1, min(size // _ROWS_A_RUN[name], _MAX_RUNS_A_BATCH))
    columns = TABLE_COLUMNS[name]
    for batch in db.stream(f"SELECT r.id FROM runs r {_RUN_ORDER}", (), runs):
        ids = [row[0] for row in batch]
        marks = ", ".join("?" * len(ids))
        sql = (
            f"{select} WHERE {alias}.run_id IN ({marks})"
            f" ORDER BY r.started_at, {alias}.run_id, {alias}.position"
        )
        rows = db.rows(sql, ids)
        if rows:
            yield table_frame(name, rows, columns)


#: A run's stored extension shares by sub-sitemap, as JSON text (None without any).
_BY_SITEMAP = {
    "sqlite": "json_extract(r.result, '$.dispersion.extensions.by_sitemap')",
    "postgresql": "r.result::json #>> '{dispersion,extensions,by_sitemap}'",
}


def extension_rows(db: Database, size: int = CHUNK_ROWS) -> Iterator[list[tuple[Any, ...]]]:
    """Runs whose stored result carries extension shares by sub-sitemap, in batches of at
    most ``size``, in the runs' order: (run id, site, started_at text, JSON text). The
    database reads the JSON (one statement, no query a run); runs without are skipped."""
    shares = _BY_SITEMAP[db.dialect]
    sql = (
        f"SELECT r.id, s.origin, r.started_at, {shares}{_FROM_RUNS}"
        f" WHERE {shares} IS NOT NULL {_RUN_ORDER}"
    )
    with db.snapshot():
        yield from db.stream(sql, (), size)
