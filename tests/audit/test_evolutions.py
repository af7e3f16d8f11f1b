"""Site evolutions audited twice through ``auditor audit``: template churn is never a content
change, every real edit is, and an accurate site is trusted across the two runs.

Each evolution in ``fixtures/evolutions`` is served on loopback as its ``v1/`` build,
audited, then served as its ``v2/`` build on the same origin and audited again into the
same history. ``manifest.json`` holds each page's truth.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.history import History
from auditor.scorer.result import PageObservation
from tests.loopback import FIXTURES, LoopbackServer

EVOLUTIONS = sorted(p.name for p in (FIXTURES / "evolutions").iterdir() if p.is_dir())


@dataclass(frozen=True)
class Outcome:
    """What the two audits of one evolution said."""

    manifest: dict
    db: Path
    first: dict
    second: dict
    pages: dict[str, PageObservation]  # the second run's, by path

    def truth(self, changed: bool) -> list[str]:
        return [path for path, page in self.manifest["pages"].items() if page["changed"] is changed]


def audit(origin: str, db: Path, out: Path, *, full: bool = True) -> dict:
    # the whole budget: every page of the site is compared, not only until a verdict
    command = ["audit", origin, "--db", str(db), "--delay", "0", "--sample", "40"]
    command += ["--full-sample"] if full else []
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*command, "--json", "--out", str(out)]) == 0
    return json.loads(printed.getvalue())


def run_evolution(name: str, folder: Path, *, full: bool = True) -> Outcome:
    site = FIXTURES / "evolutions" / name
    db = folder / f"{name}.sqlite3"
    with LoopbackServer(root=site / "v1") as server:
        first = audit(server.origin, db, folder / "reports", full=full)
        server.root = site / "v2"
        second = audit(server.origin, db, folder / "reports", full=full)
        origin = server.origin
    with History.open(db) as history:
        pages = {p.loc.removeprefix(origin): p for p in history.pages(second["run_id"])}
    manifest = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    return Outcome(manifest, db, first, second, pages)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    folder = tmp_path_factory.mktemp("evolutions")
    return {name: run_evolution(name, folder) for name in EVOLUTIONS}


def test_every_evolution_has_template_churn_and_real_edits():
    assert len(EVOLUTIONS) >= 7
    for name in EVOLUTIONS:
        manifest = json.loads((FIXTURES / "evolutions" / name / "manifest.json").read_text())
        truths = [p["changed"] for p in manifest["pages"].values()]
        assert manifest["template_changes"] and 3 <= sum(truths) < len(truths)


@pytest.mark.parametrize("name", EVOLUTIONS)
def test_template_only_changes_never_count_as_content_change(outcomes, name):
    outcome = outcomes[name]
    for path in outcome.truth(False):
        page = outcome.pages[path]
        assert page.content_changed is False, (path, page.change_summary)
        assert page.change_share == 0.0 and page.change_method == "blocks"


@pytest.mark.parametrize("name", EVOLUTIONS)
def test_real_edits_always_count(outcomes, name):
    outcome = outcomes[name]
    for path in outcome.truth(True):
        page = outcome.pages[path]
        assert page.content_changed is True, (path, outcome.manifest["pages"][path])
        assert 0 < page.change_share <= 1 and page.change_summary


@pytest.mark.parametrize("name", EVOLUTIONS)
def test_an_accurate_site_is_trusted_across_runs(outcomes, name):
    outcome = outcomes[name]
    assert outcome.first["verdict"] == "inconclusive"  # no dates of their own: nothing yet
    changes = outcome.second["changes"]
    assert changes["compared"] == len(outcome.manifest["pages"])
    assert changes["changed"] == changes["lastmod_advanced"] == len(outcome.truth(True))
    assert outcome.second["verdict"] == "trusted", outcome.second["reasons"]


@pytest.mark.parametrize("name", EVOLUTIONS)
def test_the_template_change_is_noted_not_counted(outcomes, name):
    outcome = outcomes[name]
    notes = [n for n in outcome.second["notes"] if n["code"] == "template-change"]
    if name == "news-theme-change":  # a new theme, the same words: no text of it moved
        assert notes == []
        return
    assert len(notes) == 1 and "the site's template changed between runs: " in notes[0]["detail"]
    unchanged = len(outcome.truth(False))
    assert outcome.second["changes"]["template_only"] >= unchanged - 2


def test_the_summaries_name_size_and_place(outcomes):
    pages = outcomes["shop"].pages
    summaries = [p.change_summary or "" for p in pages.values()]
    price = [s for s in summaries if s.startswith("price")]
    assert sorted(price) == [
        "price 24.90 → 44.90 in the article body",
        "price 29.90 → 24.90 in the article body",
    ]
    tutorial = outcomes["series-tutorials"].pages["/series/shed-walls.html"]
    assert tutorial.change_summary == "120 → 125 cm in the article body"
    blog = outcomes["wordpress-blog"].pages["/wordpress/cold-frame.html"]
    assert blog.change_summary == "+1 paragraph in the article body" and blog.change_share < 0.1
    footer = outcomes["wordpress-blog"].pages["/wordpress/tomato-bed.html"]
    assert (
        footer.change_summary.startswith("template only: ") and "footer" in footer.template_regions
    )


def test_no_false_and_no_missed_change_over_the_set(outcomes):
    unchanged = [o.pages[p] for o in outcomes.values() for p in o.truth(False)]
    edited = [o.pages[p] for o in outcomes.values() for p in o.truth(True)]
    false_changes = sum(bool(p.content_changed) for p in unchanged)
    missed = sum(not p.content_changed for p in edited)
    print(
        f"\n{len(unchanged) + len(edited)} pages in {len(outcomes)} evolutions: "
        f"false changes {false_changes} of {len(unchanged)} unchanged, "
        f"missed {missed} of {len(edited)} edited"
    )
    assert len(unchanged) >= 80 and len(edited) >= 25
    assert (false_changes, missed) == (0, 0)


def test_the_pages_export_carries_each_change(outcomes, tmp_path):
    from auditor.report import export_tables

    outcome = outcomes["handmade-site"]
    with History.open(outcome.db) as history:
        export_tables(history, "json", tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "pages.jsonl").read_text().splitlines()]
    second = [r for r in rows if r["run_id"] == outcome.second["run_id"]]
    edited = [r for r in second if r["content_changed"] is True]
    assert len(edited) == len(outcome.truth(True))
    for row in edited:
        assert row["change_summary"] and 0 < row["change_share"] <= 1
        assert row["change_method"] == "blocks" and row["change_distance"] > 0
    assert {r["template_regions"] for r in second if r["content_changed"] is False} == {"page body"}
    assert "fp_blocks" not in rows[0]


@pytest.mark.parametrize("name", ["wordpress-blog", "shop"])
def test_sequential_sampling_reads_the_changes_the_same_way(tmp_path, name):
    """The default audit stops sampling once decided: the pages it did compare are read
    as the full sample reads them, and the accurate site is trusted all the same."""
    outcome = run_evolution(name, tmp_path, full=False)
    truth = {path: page["changed"] for path, page in outcome.manifest["pages"].items()}
    compared = {p: page for p, page in outcome.pages.items() if page.content_changed is not None}

    assert compared and all(page.content_changed is truth[p] for p, page in compared.items())
    assert outcome.second["verdict"] == "trusted", outcome.second["reasons"]
