"""auditor db copy: a whole history from one backend to the other and back, verified,
never into a history that holds anything unless told."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest

from auditor.cli import main
from auditor.errors import HistoryError
from auditor.history import History
from auditor.history.copy import copy_history
from tests.history.backends import raw, snapshot
from tests.history.helpers import STARTED, files, large_inventory, pages, result, save

DIRECTIONS = [("sqlite", "postgresql"), ("postgresql", "sqlite")]
SITES = ("https://a.example", "https://b.example")


def _fill(url: str) -> None:
    """Five runs of two sites, one carrying a 20,000-URL inventory."""
    with History.open(url) as history:
        for day in range(2):
            for site in SITES:
                save(history, site, started=STARTED + timedelta(days=day))
        big = result(SITES[0], started=STARTED + timedelta(days=3))
        inventory = large_inventory(20_000)
        history.save_run(big, files=files(SITES[0]), entries=inventory, pages=pages(SITES[0]))


def _everything(url: str) -> dict[str, object]:
    """What a reader of the history sees, run by run and table by table."""
    with History.open(url) as history:
        runs = history.runs()
        seen: dict[str, object] = {"runs": runs, "sites": history.sites()}
        for run in runs:
            seen[f"run {run.run_id}"] = (
                history.pages(run.run_id),
                history.sitemap_files(run.run_id),
                history.segment_verdicts(run.run_id),
                history.result(run.run_id),
            )
        for name in ("runs", "segments", "pages"):
            seen[f"table {name}"] = history.table(name).to_dict("list")
        for site in SITES:
            seen[f"entries {site}"] = history.latest_entries(site)
    return seen


def _same(left: dict[str, object], right: dict[str, object]) -> None:
    assert left.keys() == right.keys()
    for key, value in left.items():
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(value, right[key])
        else:
            assert value == right[key], key


@pytest.mark.parametrize(("source", "target"), DIRECTIONS, ids=lambda kind: kind)
def test_a_history_moves_house_and_back_unchanged(new_db, source, target):
    src, dst, back = new_db(source), new_db(target), new_db(source)
    _fill(src)
    with History.open(src) as a, History.open(dst) as b:
        summary = copy_history(a, b)
    assert (summary.runs, summary.sites, summary.replaced) == (5, 2, 0)
    assert summary.rows["pages"] == 15 and summary.rows["url_state"] == 2
    original = _everything(src)
    _same(original, _everything(dst))
    with History.open(dst) as b, History.open(back) as c:
        copy_history(b, c)
    _same(original, _everything(back))
    with History.open(dst) as b:  # the copy goes on: new ids follow the copied ones
        assert save(b, "https://new.example", started=STARTED) == 6
        assert [s.origin for s in b.sites()] == [*SITES, "https://new.example"]


@pytest.mark.parametrize(("source", "target"), DIRECTIONS, ids=lambda kind: kind)
def test_a_target_that_holds_a_history_is_refused_unless_forced(new_db, source, target):
    src, dst = new_db(source), new_db(target)
    _fill(src)
    with History.open(dst) as b:
        save(b, "https://kept.example")
    before = snapshot(dst)
    refused = pytest.raises(HistoryError, match=r"not empty \(1 runs, .*--force")
    with History.open(src) as a, History.open(dst) as b, refused:
        copy_history(a, b)
    assert snapshot(dst) == before
    with History.open(src) as a, History.open(dst) as b:
        assert copy_history(a, b, replace=True).replaced == 1
    _same(_everything(src), _everything(dst))


@pytest.mark.parametrize(("source", "target"), DIRECTIONS, ids=lambda kind: kind)
def test_a_copy_that_does_not_add_up_writes_nothing(new_db, source, target, monkeypatch):
    src, dst = new_db(source), new_db(target)
    _fill(src)
    with History.open(src) as a, History.open(dst) as b:
        insert = b._db.insert_rows

        def lose_a_page(table, columns, rows):  # type: ignore[no-untyped-def]
            insert(table, columns, rows[1:] if table == "pages" else rows)

        monkeypatch.setattr(b._db, "insert_rows", lose_a_page)
        with pytest.raises(HistoryError, match="does not match"):
            copy_history(a, b)
    with History.open(dst) as b:
        assert b.runs() == [] and b.table("pages").empty


def test_a_history_is_not_copied_onto_itself(new_db):
    url = new_db("sqlite")
    _fill(url)
    refused = pytest.raises(HistoryError, match="same database")
    with History.open(url) as a, History.open(url) as b, refused:
        copy_history(a, b, replace=True)
    assert len(_everything(url)["runs"]) == 5  # type: ignore[arg-type]


@pytest.mark.parametrize(("source", "target"), DIRECTIONS, ids=lambda kind: kind)
def test_the_db_copy_command(new_db, source, target, capsys):
    src, dst = new_db(source), new_db(target)
    _fill(src)
    assert main(["db", "copy", "--from", src, "--to", dst]) == 0
    out = capsys.readouterr().out
    assert out.startswith("copied 5 runs of 2 sites from ") and "verified" in out
    assert main(["db", "copy", "--from", src, "--to", dst]) == 1
    assert "not empty" in capsys.readouterr().err
    assert main(["db", "copy", "--from", src, "--to", dst, "--force", "-q"]) == 0
    assert "replacing 5 runs" in capsys.readouterr().out
    _same(_everything(src), _everything(dst))


@pytest.mark.parametrize(("source", "target"), DIRECTIONS, ids=lambda kind: kind)
def test_an_empty_or_missing_source_never_empties_the_target(new_db, source, target, capsys):
    src, dst = new_db(source), new_db(target)
    _fill(dst)
    before = snapshot(dst)
    History.open(src).close()  # a history, but no run in it
    assert main(["db", "copy", "--from", src, "--to", dst, "--force"]) == 1
    assert "holds no run: nothing to copy" in capsys.readouterr().err
    typo = str(Path(new_db("sqlite")).with_name("typo.sqlite3"))
    assert main(["db", "copy", "--from", typo, "--to", dst, "--force"]) == 1
    assert "no such file" in capsys.readouterr().err
    assert not Path(typo).exists()
    assert snapshot(dst) == before


def test_a_team_s_own_table_beside_the_history_is_left_alone(new_db):
    src, dst = new_db("sqlite"), new_db("postgresql")
    _fill(src)
    raw(src, "CREATE TABLE notes (body TEXT)")
    raw(src, "INSERT INTO notes VALUES ('mine')")
    with History.open(src) as a, History.open(dst) as b:
        summary = copy_history(a, b)
    assert "notes" not in summary.rows and summary.runs == 5
    _same(_everything(src), _everything(dst))
