"""The streamed export writes what the whole-frame export wrote, in every format, on both
backends: same columns in the same order, same types, same values (the whole-frame path
of before is kept below, as it was, to compare with)."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from auditor.history import History
from auditor.history.records import SiteRecord
from auditor.history.rows import unsigned64
from auditor.history.tables import TABLES, table_dtypes
from auditor.report.exports import (
    EXPORT_TABLES,
    EXTENSION_DTYPES,
    arrow_schema,
    export_tables,
    neutralise_formulas,
)
from tests.history.helpers import STARTED, entries, files, pages, result

SITES = ("https://a.example", "https://b.example", "https://c.example")


def _shares(urls: int, images: int) -> dict[str, Any]:
    return {
        "urls": urls, "with_hreflang": 1, "share_with_hreflang": 1 / urls,
        "with_images": images, "share_with_images": images / urls, "with_video": 0,
        "share_with_video": 0.0, "news": 2, "share_news": 2 / urls,
    }  # fmt: skip


def _pages(site: str, run: int) -> list[Any]:
    """The helpers' pages, the indexing columns filled in the second run only (a chunk of
    the first run's pages has them all null), a 404 of the inventory and an orphan."""
    made = pages(site)
    if run:
        made = [
            replace(p, final_url=f"{p.loc}/", noindex="meta", canonical=p.loc, etag="=SUM(A1)")
            for p in made
        ]
    gone = replace(made[2], loc=f"{site}/d", sitemap=f"{site}/blog.xml", status=404, error=None)
    orphan = replace(made[0], loc=f"{site}/not-listed", lastmod=None)
    return [*made, gone, orphan]


def _fill(history: History) -> None:
    for run in range(2):
        for n, site in enumerate(SITES):
            started = STARTED + timedelta(days=7 * run, hours=n)
            base = result(site, started=started)
            extensions = {"urls": 5, "by_sitemap": {f"{site}/news.xml": _shares(3, run + n)}}
            if (run, n) != (0, 1):  # a run without extensions
                base = replace(base, dispersion={**base.dispersion, "extensions": extensions})
            history.save_run(
                base, files=files(site), entries=entries(site), pages=_pages(site, run)
            )


# -- the export as it was (whole frames), to compare with --------------------------------

_OLD_INSTANTS = frozenset(
    {"started_at", "finished_at", "fetched_at", "lastmod", "date_modified", "date_published",
     "http_last_modified", "last_started_at", "last_finished_at", "due_at"}
)  # fmt: skip
_OLD_FLAGS = frozenset(
    {"date_modified_credible", "truncated", "content_changed", "template_changed"}
)


def _old_table_frame(name: str, rows: Any, columns: Any) -> pd.DataFrame:
    from dataclasses import asdict

    if name == "sites":
        columns = [f.name for f in fields(SiteRecord)]
        rows = [tuple(asdict(row).values()) for row in rows]
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    return pd.DataFrame({c: _old_column(c, list(v)) for c, v in zip(columns, values, strict=True)})


def _old_column(name: str, values: list[Any]) -> Any:
    if name in _OLD_INSTANTS:
        return pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601")
    if name in _OLD_FLAGS:
        return pd.array(values, dtype="boolean")
    if name == "fp_simhash":
        return pd.array([unsigned64(v) for v in values], dtype="UInt64")
    return pd.array(values) if values else pd.Series(values, dtype=object)


def _old_tables(history: History) -> dict[str, pd.DataFrame]:
    from auditor.coverage import check_coverage
    from auditor.report.exports import COVERAGE_DTYPES, FINDING_DTYPES

    tables = {"sites": _old_table_frame("sites", history.sites(), [])}
    for name in ("runs", "segments", "pages"):
        columns, rows = history._db.described(TABLES[name])
        tables[name] = _old_table_frame(name, rows, columns)
    counts: list[dict[str, object]] = []
    findings: list[dict[str, object]] = []
    for site in history.sites():
        found = check_coverage(history, site.origin, limit=None)
        counts += found.sitemap_rows()
        findings += found.finding_rows()
    tables["coverage"] = pd.DataFrame(counts, columns=list(COVERAGE_DTYPES))
    tables["coverage_findings"] = pd.DataFrame(findings, columns=list(FINDING_DTYPES))
    rows: list[dict[str, object]] = []
    runs = tables["runs"]
    for run_id, site, started in zip(runs["run_id"], runs["site"], runs["started_at"], strict=True):
        stored = history.result(int(run_id)) or {}
        found_ext = (stored.get("dispersion") or {}).get("extensions") or {}
        for sitemap, shares in (found_ext.get("by_sitemap") or {}).items():
            rows.append({"run_id": run_id, "site": site, "started_at": started,
                         "sitemap": sitemap, **shares})  # fmt: skip
    tables["extensions"] = pd.DataFrame(rows, columns=list(EXTENSION_DTYPES))
    return tables


def _old_export(tables: dict[str, pd.DataFrame], fmt: str, folder: Path) -> None:
    folder.mkdir(parents=True)
    for name, frame in tables.items():
        path = folder / f"{name}.{ {'json': 'jsonl'}.get(fmt, fmt) }"
        if fmt == "csv":
            neutralise_formulas(frame).to_csv(path, index=False)
        elif fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_json(path, orient="records", lines=True, date_format="iso", force_ascii=False)


# -- the comparisons ---------------------------------------------------------------------


@pytest.fixture
def filled(db_url, tmp_path):
    """(history URL, the old export's tables) of three sites of two runs each."""
    with History.open(db_url) as history:
        _fill(history)
        old = _old_tables(history)
    assert all(len(old[name]) for name in EXPORT_TABLES)
    return db_url, old


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_the_streamed_export_writes_what_the_whole_frames_did(filled, tmp_path, fmt):
    url, old = filled
    _old_export(old, fmt, tmp_path / "old")
    with History.open(url) as history:  # chunks of 3 rows: pages a run at a time
        paths = export_tables(history, fmt, tmp_path / "new", size=3)

    assert [p.stem for p in paths] == list(EXPORT_TABLES)
    for path in paths:
        before = tmp_path / "old" / path.name
        if fmt == "json":
            assert path.read_bytes() == before.read_bytes(), path.name
        elif fmt == "csv":
            _same_csv(path, before, _dtypes(path.stem))
        else:
            _same_parquet(path, before, _dtypes(path.stem))


def _dtypes(name: str) -> dict[str, str]:
    from auditor.report.exports import COVERAGE_DTYPES, FINDING_DTYPES

    extra = {"coverage": COVERAGE_DTYPES, "coverage_findings": FINDING_DTYPES,
             "extensions": EXTENSION_DTYPES}  # fmt: skip
    return extra[name] if name in extra else table_dtypes(name)


def _same_csv(path: Path, before: Path, dtypes: dict[str, str]) -> None:
    """The same cells, instants aside: those are the same instants, always written to
    the microsecond now (pandas wrote a column to the millisecond, or the second, when
    every value of the whole table allowed it; a chunk's values cannot tell)."""
    new, old = (pd.read_csv(p, dtype=str, keep_default_na=False) for p in (path, before))
    assert list(new.columns) == list(old.columns) == list(dtypes)
    assert len(new) == len(old) > 0
    for column, dtype in dtypes.items():
        if dtype.startswith("datetime64"):
            parsed = [pd.to_datetime(f[column].replace("", None), utc=True) for f in (new, old)]
            pd.testing.assert_series_equal(*parsed, check_names=False)
            assert new[column].str.fullmatch(r"(\S+ \S+\.\d{6}\+00:00)?").all()
        else:
            assert new[column].tolist() == old[column].tolist(), column
    if path.stem == "pages":
        assert "'=SUM(A1)" in new["etag"].tolist()


def _same_parquet(path: Path, before: Path, dtypes: dict[str, str]) -> None:
    """The same frame read back, each column's type included; where the old table had a
    column all null (typed by nothing, so written as Arrow's null type), the new one keeps
    the column's type; one row group a chunk, all under the schema fixed up front."""
    new, old = pd.read_parquet(path), pd.read_parquet(before)
    assert list(new.columns) == list(old.columns) == list(dtypes)
    for column in dtypes:
        if old[column].isna().all():
            assert new[column].isna().all() and str(new[column].dtype) == dtypes[column]
        else:
            pd.testing.assert_series_equal(new[column], old[column], check_names=False)
    file = pq.ParquetFile(path)
    assert file.schema_arrow.equals(arrow_schema(dtypes), check_metadata=False)
    assert file.metadata.num_row_groups > 1 or len(new) <= 3


def test_a_chunk_whose_column_is_all_null_keeps_the_schema(filled, tmp_path):
    url, _ = filled
    with History.open(url) as history:
        paths = export_tables(history, "parquet", tmp_path, size=5)
    pages = pq.ParquetFile(next(p for p in paths if p.stem == "pages"))
    first = pages.read_row_group(0).to_pandas()
    assert first["final_url"].isna().all()  # the first run's pages have none
    assert str(pages.schema_arrow.field("final_url").type) == "string"
    assert str(pages.schema_arrow.field("fp_simhash").type) == "uint64"
    assert pages.metadata.num_row_groups == 6  # one a run


def test_an_empty_history_exports_typed_empty_tables(db_url, tmp_path):
    with History.open(db_url) as history:
        paths = export_tables(history, "parquet", tmp_path / "p")
        csv = export_tables(history, "csv", tmp_path / "c")
    for path in paths:
        frame = pd.read_parquet(path)
        assert frame.empty and dict(frame.dtypes.astype(str)) == _dtypes(path.stem)
    assert csv[3].read_text().startswith("run_id,site,loc,")
