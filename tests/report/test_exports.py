"""Exports of the history: CSV (formulas neutralised), Parquet and JSON lines."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from auditor.cli import main
from auditor.history import History
from auditor.report import export_tables, neutralise_formulas


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl", "json"])
def test_every_table_in_every_format(audited, tmp_path, fmt):
    database = audited[0]
    with History.open(database) as history:
        paths = export_tables(history, fmt, tmp_path / fmt)
        expected = {name: history.table(name) for name in ("sites", "runs", "segments", "pages")}

    suffix = {"json": "jsonl"}.get(fmt, fmt)  # json: the former name of jsonl, still taken
    assert [p.name for p in paths] == [
        f"{n}.{suffix}"
        for n in (
            "sites",
            "runs",
            "segments",
            "pages",
            "coverage",
            "coverage_findings",
            "extensions",
        )
    ]
    for path in paths[:4]:
        name = path.stem
        if fmt == "csv":
            frame = pd.read_csv(path)
        elif fmt == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_json(path, lines=True)
        assert len(frame) == len(expected[name]) > 0
        assert list(frame.columns) == list(expected[name].columns)
    runs = pd.read_csv(tmp_path / "csv" / "runs.csv") if fmt == "csv" else None
    if runs is not None:
        assert runs["verdict"].tolist() == ["partial", "partial"]


def test_csv_cells_that_look_like_formulas_are_neutralised():
    frame = pd.DataFrame(
        {"loc": ["=HYPERLINK(1)", "+1", "-2", "@SUM(A1)", "https://ok"], "n": [1, -2, 3, 4, 5]}
    )
    out = neutralise_formulas(frame)

    assert out["loc"].tolist() == ["'=HYPERLINK(1)", "'+1", "'-2", "'@SUM(A1)", "https://ok"]
    assert out["n"].tolist() == [1, -2, 3, 4, 5]  # numbers stay numbers


def test_export_command(audited, tmp_path, capsys):
    database, _, _ = audited
    assert main(["export", "--db", str(database), "--format", "jsonl", "--out", str(tmp_path)]) == 0
    written = capsys.readouterr().out.split()

    assert [p.rsplit("/", 1)[1] for p in written] == [
        "sites.jsonl",
        "runs.jsonl",
        "segments.jsonl",
        "pages.jsonl",
        "coverage.jsonl",
        "coverage_findings.jsonl",
        "extensions.jsonl",
    ]
    coverage = [json.loads(line) for line in (tmp_path / "coverage.jsonl").read_text().splitlines()]
    assert coverage and {"sitemap", "urls", "crawled", "not_crawled", "noindex"} <= set(coverage[0])
    first = json.loads((tmp_path / "pages.jsonl").read_text().splitlines()[0])
    assert {"loc", "sitemap", "stratum"} <= set(first)
