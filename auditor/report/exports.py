"""Exports of the history for notebooks and warehouses: CSV, Parquet or JSON Lines.

Every table is streamed: read in chunks (:data:`~auditor.history.tables.CHUNK_ROWS` rows),
each chunk converted and appended to its file (a CSV header once; JSON Lines appended;
one Parquet row group a chunk under one schema fixed up front from the table's column
types), so memory does not grow with the history.

Touches: the database, the disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from auditor.history.tables import CHUNK_ROWS, INSTANT, table_dtypes
from auditor.report import EXPORT_FORMATS

if TYPE_CHECKING:
    from auditor.history import History

__all__ = [
    "COVERAGE_DTYPES",
    "EXPORT_FORMATS",
    "EXPORT_TABLES",
    "EXTENSION_DTYPES",
    "FINDING_DTYPES",
    "coverage_chunks",
    "export_tables",
    "extension_chunks",
    "neutralise_formulas",
]

EXPORT_TABLES = (
    "sites", "runs", "segments", "pages", "coverage", "coverage_findings", "extensions"
)  # fmt: skip
_FORMULA_STARTS = ("=", "+", "-", "@")
#: Former names of a format, still taken: ``json`` was JSON Lines' before ``jsonl``.
_OLD_NAMES = {"json": "jsonl"}
Dtypes = dict[str, str]


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first),
    made inert with a leading apostrophe. Numbers are left alone."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if pd.api.types.is_string_dtype(values) and values.dtype != object:
            risky = values.str.startswith(_FORMULA_STARTS).fillna(False).astype(bool)
            out[column] = values.mask(risky, "'" + values)
        elif values.dtype == object:
            out[column] = values.map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_STARTS) else v
            )
    return out


def export_tables(
    history: History, fmt: str, folder: Path, *, size: int = CHUNK_ROWS
) -> list[Path]:
    """Write sites, runs, segments (sub-sitemap verdicts), pages (page observations) and
    each site's coverage (per sub-sitemap, and finding by finding) and each run's sitemap
    extensions (per sub-sitemap) to ``folder`` in ``fmt``; returns the files written.

    Streamed in chunks of about ``size`` rows: memory does not grow with the history."""
    fmt = _OLD_NAMES.get(fmt, fmt)
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / f"{name}.{fmt}" for name in EXPORT_TABLES}
    for name in ("sites", "runs", "segments", "pages"):
        with _writer(fmt, paths[name], table_dtypes(name)) as out:
            for chunk in history.table_chunks(name, size):
                out.write(chunk)
    with (
        _writer(fmt, paths["coverage"], COVERAGE_DTYPES) as counts,
        _writer(fmt, paths["coverage_findings"], FINDING_DTYPES) as findings,
    ):
        for count_chunk, finding_chunk in coverage_chunks(history, size):
            counts.write(count_chunk)
            findings.write(finding_chunk)
    with _writer(fmt, paths["extensions"], EXTENSION_DTYPES) as out:
        for chunk in extension_chunks(history, size):
            out.write(chunk)
    return [paths[name] for name in EXPORT_TABLES]


# -- the tables built here -------------------------------------------------------------

#: The coverage tables' columns and types (those pandas gives their rows: ``str`` text).
COVERAGE_DTYPES: Dtypes = {
    "site": "str", "sitemap": "str", "urls": "int64", "crawled": "int64",
    "not_crawled": "int64", "in_several_sitemaps": "int64", "redirect": "int64",
    "client_error": "int64", "server_error": "int64", "noindex": "int64",
    "canonical_elsewhere": "int64", "walked_at": INSTANT,
}  # fmt: skip
FINDING_DTYPES: Dtypes = dict.fromkeys(
    ("site", "sitemap", "finding", "url", "detail", "source"), "str"
)
#: The extensions table's columns and types.
EXTENSION_DTYPES: Dtypes = {
    "run_id": "int64", "site": "str", "started_at": INSTANT, "sitemap": "str",
    "urls": "int64", "with_hreflang": "int64", "share_with_hreflang": "float64",
    "with_images": "int64", "share_with_images": "float64", "with_video": "int64",
    "share_with_video": "float64", "news": "int64", "share_news": "float64",
}  # fmt: skip


def typed_frame(rows: list[dict[str, Any]], dtypes: Dtypes) -> pd.DataFrame:
    """Rows (dicts) as a frame of ``dtypes``' columns and types (an empty one keeps them)."""
    frame = pd.DataFrame(rows, columns=list(dtypes))
    for column, dtype in dtypes.items():
        if str(frame[column].dtype) != dtype:
            values, wanted = frame[column], pd.api.types.pandas_dtype(dtype)
            if dtype == INSTANT:
                values = pd.to_datetime(values, utc=True, format="ISO8601")
            frame[column] = values.astype(wanted)
    return frame


def coverage_chunks(
    history: History, size: int = CHUNK_ROWS
) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    """Every site's coverage against the history's crawl record, checked site by site
    and handed on in chunks of about ``size`` rows: (``coverage``, one row per
    sub-sitemap (its counts); ``coverage_findings``, one row per URL and finding, every
    one but never-crawled URLs, which are counted)."""
    from auditor.coverage import check_coverage

    counts: list[dict[str, object]] = []
    findings: list[dict[str, object]] = []
    for origin in history.audited():
        try:
            result = check_coverage(history, origin, limit=None)
        except ValueError:  # no inventory kept
            continue
        counts += result.sitemap_rows()
        findings += result.finding_rows()
        if len(counts) + len(findings) >= size:
            yield typed_frame(counts, COVERAGE_DTYPES), typed_frame(findings, FINDING_DTYPES)
            counts, findings = [], []
    if counts or findings:
        yield typed_frame(counts, COVERAGE_DTYPES), typed_frame(findings, FINDING_DTYPES)


def extension_chunks(history: History, size: int = CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """Each run's sitemap extensions, one row per sub-sitemap that carries any: URLs with
    hreflang alternates, with images, with video, news entries, and their shares (from
    the stored results' ``dispersion.extensions``), in chunks, oldest run first."""
    for batch in history.extension_shares(size):
        rows = [
            {"run_id": run_id, "site": site, "started_at": started, "sitemap": sitemap, **shares}
            for run_id, site, started, text in batch
            for sitemap, shares in (json.loads(text) or {}).items()
        ]
        if rows:
            yield typed_frame(rows, EXTENSION_DTYPES)


# -- writers ---------------------------------------------------------------------------


class _Writer:
    """One export file, written a chunk at a time; an empty table keeps its columns."""

    def __init__(self, path: Path, dtypes: Dtypes) -> None:
        self.path, self.dtypes, self.chunks = path, dtypes, 0

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, *failure: object) -> None:
        if (
            failure[0] is None and self.chunks == 0
        ):  # the header, schema or empty line of an empty table
            self.append(typed_frame([], self.dtypes))
        self.close()

    def write(self, frame: pd.DataFrame) -> None:
        """Append one chunk (the table's columns, in order; an empty one adds nothing)."""
        if frame.empty:
            return
        self.append(frame[list(self.dtypes)])
        self.chunks += 1

    def append(self, frame: pd.DataFrame) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Finish the file."""


class _TextWriter(_Writer):
    def __init__(self, path: Path, dtypes: Dtypes) -> None:
        super().__init__(path, dtypes)
        self.file: TextIO = path.open("w", encoding="utf-8", newline="")

    def close(self) -> None:
        self.file.close()


class _CsvWriter(_TextWriter):
    """CSV: the header once; formulas neutralised; instants all written alike
    (``2026-11-29 20:00:00.250000+00:00``, whatever the chunk)."""

    def append(self, frame: pd.DataFrame) -> None:
        out = neutralise_formulas(frame)
        for column, dtype in self.dtypes.items():
            if dtype == INSTANT:
                out[column] = _instant_text(out[column])
        out.to_csv(self.file, index=False, header=self.chunks == 0)


def _instant_text(values: pd.Series) -> pd.Series:

    text = pc.replace_substring(pc.cast(pa.array(values), pa.string()), "Z", "+00:00")
    return pd.Series(pd.array(text, dtype="string"), index=values.index)


def _iso_millis(values: pd.Series) -> pd.Series:
    """UTC instants as ``to_json(date_format="iso")`` writes them: milliseconds (floored),
    ``2026-11-29T20:00:00.250Z``."""
    import numpy as np

    micros = values.dt.tz_localize(None).to_numpy(dtype="datetime64[us]").view(np.int64)
    millis = pa.array(micros // 1000, mask=values.isna().to_numpy())
    text = pc.cast(millis.cast(pa.timestamp("ms", tz="UTC")), pa.string())
    iso = pc.replace_substring(text, " ", "T", max_replacements=1)
    return pd.Series(pd.array(iso, dtype="string"), index=values.index)


class _JsonWriter(_TextWriter):
    """JSON Lines: one object a row, instants in ISO 8601 (milliseconds, ``Z``)."""

    def append(self, frame: pd.DataFrame) -> None:
        frame = frame.copy()
        for column, dtype in self.dtypes.items():
            if dtype == INSTANT:  # as pandas writes them, but not a Timestamp a value
                frame[column] = _iso_millis(frame[column])
        text = frame.to_json(orient="records", lines=True, date_format="iso", force_ascii=False)
        self.file.write(text)


class _ParquetWriter(_Writer):
    """Parquet: one schema for the whole file (:func:`arrow_schema`), a row group a chunk."""

    def __init__(self, path: Path, dtypes: Dtypes) -> None:
        super().__init__(path, dtypes)
        self.schema = arrow_schema(dtypes)
        self.file: pq.ParquetWriter = pq.ParquetWriter(path, self.schema)

    def append(self, frame: pd.DataFrame) -> None:
        table = pa.Table.from_pandas(frame, schema=self.schema, preserve_index=False)
        self.file.write_table(table)

    def close(self) -> None:
        self.file.close()


_ARROW_TYPES = {
    "string": "string", "str": "string", "Int64": "int64", "int64": "int64",
    "UInt64": "uint64", "Float64": "float64", "float64": "float64", "boolean": "bool",
}  # fmt: skip


def arrow_schema(dtypes: Dtypes) -> pa.Schema:
    """The Parquet schema of a table of ``dtypes``: each column's Arrow type, and the
    pandas metadata that reads it back as that pandas type."""

    empty = typed_frame([], dtypes)
    metadata = pa.Schema.from_pandas(empty, preserve_index=False).metadata
    return pa.schema(
        [
            pa.field(
                name,
                pa.timestamp("us", tz="UTC")
                if dtype == INSTANT
                else pa.type_for_alias(_ARROW_TYPES[dtype]),
            )
            for name, dtype in dtypes.items()
        ],
        metadata=metadata,
    )


_WRITERS: dict[str, type[_Writer]] = {
    "csv": _CsvWriter, "jsonl": _JsonWriter, "parquet": _ParquetWriter
}  # fmt: skip


def _writer(fmt: str, path: Path, dtypes: Dtypes) -> _Writer:
    return _WRITERS[fmt](path, dtypes)
