"""auditor demo: every simulated site audited twice, reports and the fleet index written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.cli import main
from auditor.demo import DEMO_GAP, demo_sites, run_demo
from auditor.demo.site import BEHAVIOURS
from auditor.history import History


def test_the_demo_audits_every_site_twice_and_writes_reports(tmp_path):
    rows, index = run_demo(tmp_path)

    assert [r.name for r in rows] == [*BEHAVIOURS, "mixed"]
    verdicts = {r.name: (r.first, r.second) for r in rows}
    assert verdicts["accurate-jsonld"] == ("trusted", "trusted")
    assert verdicts["frozen"] == ("trusted", "untrusted")
    assert verdicts["accurate-no-structured"] == ("inconclusive", "trusted")
    assert verdicts["mixed"] == ("partial", "partial")
    for row in rows:
        assert row.report == tmp_path / row.name / "index.html" and row.report.is_file()
    html = index.read_text(encoding="utf-8")
    assert all(f'href="{r.name}/index.html"' in html for r in rows)
    assert (tmp_path / "history.sqlite3").is_file()
    _runs_are_days_apart(tmp_path / "history.sqlite3", rows)


def _runs_are_days_apart(database, rows) -> None:
    """On the demo's simulated clock the two runs are a week apart, the second about now,
    so change rates read as a real site's (not 1e5 changes per page per day)."""
    rates = []
    with History.open(database) as history:
        for row in rows:
            first, second = history.runs(row.origin)
            assert DEMO_GAP <= second.started_at - first.started_at < DEMO_GAP + timedelta(hours=1)
            assert abs(second.finished_at - datetime.now(UTC)) < timedelta(hours=1)
            pages = history.pages(second.run_id)
            assert all(second.started_at <= p.fetched_at <= second.finished_at for p in pages)
            segments = history.result(second.run_id)["segments"]
            rates += [s["change_rate"] for s in segments if s["change_rate"] is not None]
    assert rates and all(0 <= rate < 1 for rate in rates)
    assert any(rate > 0.01 for rate in rates)  # a quarter of the pages change in a week


def test_demo_command_prints_the_table_and_the_index(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out

    assert out.splitlines()[0].split()[:3] == ["demo", "site", "run"]
    assert f"Open the fleet index: {tmp_path / 'index.html'}" in out
    assert len(demo_sites()) == 9


def _users_history(folder):
    """A real history a user keeps in the folder the demo is pointed at."""
    from auditor.history import History

    with History.open(folder / "history.sqlite3"):
        pass
    return (folder / "history.sqlite3").read_bytes()


def test_the_demo_never_deletes_a_history_it_did_not_make(tmp_path, capsys):
    before = _users_history(tmp_path)

    assert main(["demo", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err

    assert "history.sqlite3" in err and "not made by auditor demo" in err
    assert (tmp_path / "history.sqlite3").read_bytes() == before
    assert not (tmp_path / "index.html").exists()  # refused before any audit


def test_the_demo_never_deletes_a_file_that_is_not_a_database(tmp_path):
    (tmp_path / "history.sqlite3").write_text("my notes", encoding="utf-8")

    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert (tmp_path / "history.sqlite3").read_text(encoding="utf-8") == "my notes"


def test_the_demo_replaces_its_own_history(tmp_path):
    from auditor.demo import fresh_demo_history
    from auditor.history import History

    database = fresh_demo_history(tmp_path)
    with History.open(database) as history:
        assert history.runs(None) == []
    (tmp_path / "history.sqlite3-wal").write_bytes(b"")

    assert fresh_demo_history(tmp_path) == database  # the demo's own: replaced
    assert not (tmp_path / "history.sqlite3-wal").exists()
