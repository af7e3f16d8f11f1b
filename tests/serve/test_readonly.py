"""A history opened read-only (``auditor serve``): it reads, never creates, never
migrates, never writes, on SQLite and on PostgreSQL; and it reads what another process
saves meanwhile."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from auditor.errors import HistoryError
from auditor.history import MIGRATIONS, History
from auditor.history.db import _open, migrate
from auditor.history.location import locate
from auditor.serve.readers import Readers
from tests.history.backends import is_postgres, make_newer, raw, snapshot
from tests.history.helpers import STARTED, save

ROOT = Path(__file__).resolve().parents[2]


def _saved(url: str, runs: int = 1) -> None:
    with History.open(url) as history:
        for n in range(runs):
            save(history, f"https://site{n}.example")


def test_a_read_only_handle_reads_the_runs(db_url):
    _saved(db_url, 2)
    with History.open(db_url, read_only=True) as history:
        assert [s.origin for s in history.sites()] == [
            "https://site0.example",
            "https://site1.example",
        ]
        assert history.applied == ()
        assert history.read_only


def test_a_write_through_a_read_only_handle_fails_and_changes_nothing(db_url):
    _saved(db_url)
    before = snapshot(db_url)
    with History.open(db_url, read_only=True) as history:
        with pytest.raises(HistoryError, match="read-only"):
            save(history, "https://other.example")
        # past the history's own guard: the database itself refuses
        with pytest.raises(HistoryError, match=r"read.only|readonly"):
            history._db.execute("DELETE FROM runs")
        with pytest.raises(HistoryError, match=r"read.only|readonly"):
            history._db.execute("CREATE TABLE intruder (x INTEGER)")
        assert len(history.runs()) == 1
    assert raw(db_url, "SELECT count(*) FROM runs") == [(1,)]
    if is_postgres(db_url):
        assert snapshot(db_url) == before
    else:
        assert snapshot(db_url)["history.sqlite3"] == before["history.sqlite3"]


def test_a_missing_sqlite_file_is_not_created(tmp_path):
    path = tmp_path / "no" / "such" / "history.sqlite3"
    with pytest.raises(HistoryError, match=r"no history at .*history\.sqlite3"):
        History.open(path, read_only=True)
    assert not (tmp_path / "no").exists()


def test_a_missing_history_in_an_empty_postgresql_database_is_not_created(postgres_server):
    url = postgres_server.new_database("auditor")
    with pytest.raises(HistoryError, match="holds no history"):
        History.open(url, read_only=True)
    assert raw(url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [(0,)]


def _behind(url: str, missing: int) -> None:
    """A history that lacks its ``missing`` latest migrations."""
    database = _open(locate(url))
    try:
        database.prepare()
        migrate(database, upto=len(MIGRATIONS) - missing)
    finally:
        database.close()


def test_a_history_that_lacks_migrations_is_named_with_what_to_run(db_url):
    _behind(db_url, 2)
    before = snapshot(db_url)
    with pytest.raises(HistoryError) as caught:
        History.open(db_url, read_only=True)
    message = str(caught.value)
    assert MIGRATIONS[-1].name in message and MIGRATIONS[-2].name in message
    assert MIGRATIONS[-3].name not in message
    assert "auditor db upgrade --db" in message
    if is_postgres(db_url):
        assert snapshot(db_url) == before
    else:
        assert snapshot(db_url)["history.sqlite3"] == before["history.sqlite3"]


def test_the_command_named_brings_the_history_up_to_date(db_url, capsys):
    from auditor.cli import main

    _behind(db_url, 2)
    assert main(["db", "upgrade", "--db", db_url]) == 0
    said = capsys.readouterr().out
    assert "applied 2 migrations" in said and MIGRATIONS[-1].name in said
    with History.open(db_url, read_only=True) as history:  # now a reader may open it
        assert history.read_only
    assert main(["db", "upgrade", "--db", db_url]) == 0
    assert "up to date, nothing to apply" in capsys.readouterr().out


def test_a_history_of_a_newer_auditor_is_refused(db_url):
    _saved(db_url)
    make_newer(db_url)
    with pytest.raises(HistoryError, match="newer auditor"):
        History.open(db_url, read_only=True)


def test_a_sqlite_file_of_something_else_is_refused(tmp_path):
    path = tmp_path / "other.sqlite3"
    raw(str(path), "CREATE TABLE notes (x TEXT)")
    with pytest.raises(HistoryError, match="something else"):
        History.open(path, read_only=True)


def test_a_postgresql_session_is_read_only_even_after_a_lost_connection(postgres_server):
    url = postgres_server.new_database("auditor")
    _saved(url)
    with History.open(url, read_only=True, reconnect=10) as history:
        assert history._db.rows("SHOW default_transaction_read_only") == [("on",)]
        pid = history._db.rows("SELECT pg_backend_pid()")[0][0]
        postgres_server.admin(f"SELECT pg_terminate_backend({pid})")
        assert len(history.runs()) == 1  # connected again
        assert history._db.rows("SHOW default_transaction_read_only") == [("on",)]
        with pytest.raises(HistoryError, match="read-only"):
            history._db.execute("DELETE FROM runs")
    assert raw(url, "SELECT count(*) FROM runs") == [(1,)]


_WRITER = """
import sys
from datetime import timedelta
from auditor.history import History
from tests.history.helpers import STARTED, save
with History.open(sys.argv[1]) as history:
    for n in range(int(sys.argv[2])):
        save(history, "https://written.example", started=STARTED + timedelta(days=n + 1))
"""


def test_runs_saved_by_another_process_are_read_while_open(db_url):
    """WAL on SQLite: a reader opened before another process saves sees each commit (and
    nothing half-written); the file keeps no trace of the reader."""
    _saved(db_url)
    with History.open(db_url, read_only=True) as reader:
        assert len(reader.runs()) == 1
        subprocess.run(
            [sys.executable, "-c", _WRITER, db_url, "3"], cwd=ROOT, check=True, timeout=120
        )
        runs = reader.runs("https://written.example")
        assert [r.started_at.date() for r in runs] == [
            (STARTED + timedelta(days=n)).date() for n in (1, 2, 3)
        ]
    with History.open(db_url) as writer:  # a writer opens it as before
        save(writer, "https://after.example")
        assert len(writer.runs()) == 5


def test_readers_give_each_thread_its_own_read_only_handle(db_url):
    import threading

    _saved(db_url)
    readers = Readers(db_url)
    try:
        assert readers.dialect == ("postgresql" if is_postgres(db_url) else "sqlite")
        mine = readers.history()
        assert mine is readers.history() and mine.read_only
        other: list[History] = []
        thread = threading.Thread(target=lambda: other.append(readers.history()))
        thread.start()
        thread.join()
        assert other[0] is not mine and other[0].read_only
        with pytest.raises(HistoryError, match="read-only"):
            save(other[0], "https://other.example")
    finally:
        readers.close()


def test_readers_fail_at_once_on_a_missing_history(tmp_path):
    with pytest.raises(HistoryError, match="no history at"):
        Readers(str(tmp_path / "missing.sqlite3"))
    assert not (tmp_path / "missing.sqlite3").exists()


def test_a_sqlite_path_with_uri_characters_is_opened_as_it_is(tmp_path):
    folder = tmp_path / "a b?c#d%20e"
    folder.mkdir()
    path = folder / "h.sqlite3"
    _saved(str(path))
    with History.open(path, read_only=True) as history:
        assert len(history.runs()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a b?c#d%20e"]
