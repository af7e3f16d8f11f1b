"""History tables as flat DataFrames, for exports (CSV, Parquet, JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import TYPE_CHECKING, Any

from auditor.history.records import SiteRecord
from auditor.history.rows import EXPORT_PAGE_COLUMNS, SEGMENT_COLUMNS, unsigned64

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLES", "table_frame"]

_RUNS = (
    "SELECT r.id AS run_id, s.origin AS site, r.started_at, r.finished_at, r.verdict,"
    " r.recheck_days FROM runs r JOIN sites s ON s.id = r.site_id ORDER BY r.started_at, r.id"
)
_SEGMENTS = (
    "SELECT g.run_id, s.origin AS site, "
    + ", ".join(f"g.{name}" for name in SEGMENT_COLUMNS)
    + " FROM segments g JOIN runs r ON r.id = g.run_id JOIN sites s ON s.id = r.site_id"
    " ORDER BY r.started_at, g.run_id, g.position"
)
_PAGES = (
    "SELECT p.run_id, s.origin AS site, "
    + ", ".join(f"p.{name}" for name in EXPORT_PAGE_COLUMNS)
    + " FROM pages p JOIN runs r ON r.id = p.run_id JOIN sites s ON s.id = r.site_id"
    " ORDER BY r.started_at, p.run_id, p.position"
)
#: The exportable tables and the query of each ("sites" is built from the site records).
TABLES: dict[str, str] = {"sites": "", "runs": _RUNS, "segments": _SEGMENTS, "pages": _PAGES}

_INSTANTS = frozenset(
    {
        "started_at",
        "finished_at",
        "fetched_at",
        "lastmod",
        "date_modified",
        "date_published",
        "http_last_modified",
        "last_started_at",
        "last_finished_at",
        "due_at",
    }
)
_FLAGS = frozenset({"date_modified_credible", "truncated", "content_changed", "template_changed"})


def table_frame(name: str, rows: Sequence[Any], columns: Sequence[str]) -> pd.DataFrame:
    """The DataFrame of a table's rows: instants as UTC ``datetime64``, flags as nullable
    booleans, simhashes as unsigned 64-bit integers (``UInt64``)."""
    import pandas as pd

    if name == "sites":
        columns = [f.name for f in fields(SiteRecord)]
        rows = [tuple(asdict(row).values()) for row in rows]
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    return pd.DataFrame(
        {column: _column(column, list(data)) for column, data in zip(columns, values, strict=True)}
    )


def _column(name: str, values: list[Any]) -> Any:
    import pandas as pd

    if name in _INSTANTS:
        return pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601")
    if name in _FLAGS:
        return pd.array(values, dtype="boolean")
    if name == "fp_simhash":  # through a float column it would lose its low bits
        return pd.array([unsigned64(v) for v in values], dtype="UInt64")
    return pd.array(values) if values else pd.Series(values, dtype=object)
