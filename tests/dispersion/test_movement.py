"""Across runs: entries that moved between two walks, together or each on its own."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from auditor.cli import main
from auditor.dispersion import analyse, flag_codes
from auditor.walker.inventory import load_inventory, read_entries_file
from tests.loopback import FIXTURES

RUNS = FIXTURES / "dispersion"


def _entries(name: str) -> pd.DataFrame:
    return load_inventory(str(RUNS / f"{name}.xml")).entries


def test_a_regenerated_file_moves_every_entry_to_one_moment():
    report = analyse(load_inventory(str(RUNS / "after-regenerated.xml")), _entries("before"))

    movement = report.movement
    assert (movement.compared, movement.moved, movement.one_moment) == (50, 50, 50)
    assert movement.top_moment.isoformat() == "2026-11-20T04:00:00+00:00"
    details = [f for f in report.flags if f.code == "generation-time"]
    assert any("since the previous walk" in f.detail for f in details)
    assert report.segments[0].movement == movement  # one sub-sitemap


def test_real_edits_move_a_few_entries_each_to_its_own_moment():
    report = analyse(load_inventory(str(RUNS / "after-edited.xml")), _entries("before"))

    movement = report.movement
    assert (movement.compared, movement.moved) == (50, 6)
    assert movement.one_moment == 1
    assert flag_codes(report.flags) == []


def test_nothing_moved_and_new_urls_are_counted():
    previous = _entries("before").iloc[:40]
    report = analyse(load_inventory(str(RUNS / "before.xml")), previous)

    assert (report.movement.compared, report.movement.moved) == (40, 0)
    assert report.movement.new_urls == 10
    assert report.movement.one_moment_share == 0.0


def test_without_a_previous_walk_there_is_no_movement():
    report = analyse(load_inventory(str(RUNS / "before.xml")))
    assert report.movement is None
    assert all(s.movement is None for s in report.segments)


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_inspect_previous_reads_an_earlier_walk(tmp_path, capsys, form):
    earlier = tmp_path / f"before.{form}"
    assert main(["walk", str(RUNS / "before.xml"), "--format", form]) == 0
    earlier.write_text(capsys.readouterr().out)

    assert read_entries_file(earlier)["lastmod"].notna().sum() == 50
    code = main(
        ["inspect", str(RUNS / "after-regenerated.xml"), "--json", "--previous", str(earlier)]
    )
    result = json.loads(capsys.readouterr().out)

    assert code == 0
    assert result["dispersion"]["movement"]["moved"] == 50
    assert "generation-time" in result["flags"]


def test_inspect_previous_that_is_not_a_walk_output_is_a_usage_error(tmp_path, capsys):
    other = tmp_path / "other.jsonl"
    other.write_text('{"url": "x"}\n')
    assert main(["inspect", str(RUNS / "before.xml"), "--previous", str(other)]) == 2
    assert "not an `auditor walk` output" in capsys.readouterr().err


def test_an_empty_previous_walk_knows_no_url():
    empty = _entries("before").iloc[:0]
    report = analyse(load_inventory(str(RUNS / "before.xml")), empty)

    assert (report.movement.compared, report.movement.moved, report.movement.new_urls) == (0, 0, 50)


def test_far_future_and_far_past_lastmods_keep_their_value(tmp_path):
    sitemap = tmp_path / "far.xml"
    values = ["9999-12-31", "0001-01-01", "2026-01-01T00:00:00Z"]
    rows = "".join(
        f"<url><loc>https://far.example/{i}</loc><lastmod>{v}</lastmod></url>"
        for i, v in enumerate(values)
    )
    sitemap.write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>'
    )
    inventory = load_inventory(str(sitemap))
    report = analyse(inventory, inventory.entries)

    assert report.figures.newest.year == 9999 and report.figures.oldest.year == 1
    assert (report.figures.future, report.figures.implausibly_old) == (1, 1)
    assert (report.movement.compared, report.movement.moved) == (3, 0)
