"""The analyser over every sitemap of the shared real-world corpus, against reviewed output.

``corpus_expected.tsv`` (beside this file) holds what the analyser says of each
sitemap-like corpus file read as a local file, checked by eye; a change in behaviour
shows as a diff in review. Regenerate it after a deliberate change with
``AUDITOR_UPDATE_EXPECTED=1 python3 -m pytest tests/dispersion/test_corpus.py``.
Every test skips cleanly when the corpus is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from auditor.dispersion import analyse, flag_codes
from auditor.walker.inventory import load_inventory
from tests.walker.test_corpus import CORPUS_DIR, OPTIONS, SITEMAP_FILES

EXPECTED_TSV = Path(__file__).with_name("corpus_expected.tsv")
COLUMNS = ("file", "urls", "dated", "distinct_s", "top_share", "generation", "flags")
HEADER = (
    "# What the dispersion analyser says of each sitemap-like corpus file read as a local file\n"
    "# (no response headers: generation time can only be judged from the newest value).\n"
    "# dated: share with lastmod; distinct_s: distinct values at second resolution;\n"
    "# generation: anchor:share of dated values at the generation moment.\n"
)


def _row(rel: str) -> list[str]:
    inventory = load_inventory(str(CORPUS_DIR / rel), OPTIONS)
    report = analyse(inventory)
    f, g = report.figures, report.generation
    return [
        rel,
        str(f.urls),
        f"{f.share_with_lastmod:.3f}",
        str(f.distinct_seconds),
        f"{f.top_share:.3f}",
        f"{g.anchor}:{g.share:.3f}" if g.anchor else "-",
        ",".join(flag_codes(report.flags)) or "-",
    ]


def _read_expected() -> dict[str, list[str]]:
    if not EXPECTED_TSV.is_file():
        return {}
    lines = EXPECTED_TSV.read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in lines if line and not line.startswith("#")]
    return {row[0]: row for row in rows[1:]}


def test_analyser_output_matches_the_reviewed_expectations(corpus):
    actual = [_row(rel) for rel in SITEMAP_FILES]
    if os.environ.get("AUDITOR_UPDATE_EXPECTED"):
        body = "\n".join("\t".join(row) for row in [list(COLUMNS), *actual])
        EXPECTED_TSV.write_text(HEADER + body + "\n", encoding="utf-8")
        pytest.skip("corpus_expected.tsv rewritten: review the diff")
    expected = _read_expected()
    assert sorted(expected) == sorted(row[0] for row in actual), "files added or removed"
    differences = [
        f"{row[0]}:\n  expected {expected[row[0]][1:]}\n  actual   {row[1:]}"
        for row in actual
        if expected[row[0]] != row
    ]
    assert not differences, "\n".join(differences)


def test_a_rebuild_moves_every_lastmod_to_one_new_moment(corpus):
    """OpenBLAS docs (MkDocs): every lastmod is the build date, bumped on every rebuild."""
    folder = corpus / "sitemaps" / "AmpereComputing+OpenBLAS"
    oldest = load_inventory(str(folder / "gh-pages_oldest/docs/sitemap.xml.gz"), OPTIONS)
    latest = load_inventory(str(folder / "gh-pages_latest/docs/sitemap.xml.gz"), OPTIONS)

    report = analyse(latest, oldest.entries)

    assert report.movement.compared >= 10
    assert report.movement.moved == report.movement.compared
    assert report.movement.one_moment_share == 1.0
    assert "generation-time" in flag_codes(report.flags)
    assert "shared-timestamp" in flag_codes(report.flags)
