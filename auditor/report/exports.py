"""Exports of the history for notebooks and warehouses: CSV, Parquet or JSON via pandas."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from auditor.report import EXPORT_FORMATS

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["EXPORT_FORMATS", "EXPORT_TABLES", "export_tables", "neutralise_formulas"]

EXPORT_TABLES = ("sites", "runs", "segments", "pages")
_FORMULA_STARTS = ("=", "+", "-", "@")


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first),
    made inert with a leading apostrophe. Numbers are left alone."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            out[column] = values.map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_STARTS) else v
            )
    return out


#: File name endings that differ from the format's name: JSON exports are JSON Lines.
_SUFFIXES = {"json": "jsonl"}


def export_tables(history: History, fmt: str, folder: Path) -> list[Path]:
    """Write sites, runs, segments (sub-sitemap verdicts) and pages (page observations)
    to ``folder`` in ``fmt``; returns the files written."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in EXPORT_TABLES:
        frame = history.table(name)
        path = folder / f"{name}.{_SUFFIXES.get(fmt, fmt)}"
        if fmt == "csv":
            neutralise_formulas(frame).to_csv(path, index=False)
        elif fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_json(path, orient="records", lines=True, date_format="iso", force_ascii=False)
        written.append(path)
    return written
