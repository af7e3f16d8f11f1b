"""Opening: where the history is, migrations, and the databases history must refuse to
touch. Tests taking ``db_url`` run on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from auditor.errors import AuditorError, HistoryError
from auditor.history import MIGRATIONS, History, default_db_path
from auditor.history.db import migrate
from auditor.history.location import locate
from tests.history.backends import is_postgres, make_newer, raw, snapshot
from tests.history.helpers import STARTED, pages, save

NAMES = tuple(m.name for m in MIGRATIONS)


def _snapshot(path: Path) -> dict[str, bytes]:
    """The bytes of the database and of whatever lies beside it."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir())}


def test_a_new_database_gets_every_migration_recorded(db_url):
    with History.open(db_url) as history:
        assert history.applied == NAMES and NAMES[0] == "0001-initial"
    recorded = raw(db_url, "SELECT name, applied_at FROM schema_migrations ORDER BY name")
    assert [name for name, _ in recorded] == list(NAMES)
    if not is_postgres(db_url):
        assert raw(db_url, "PRAGMA user_version") == [(len(MIGRATIONS),)]


def test_a_new_sqlite_file_is_set_up_for_several_writers(tmp_path):
    path = tmp_path / "h.sqlite3"
    with History.open(path) as history:
        pragmas = {
            name: history._db.rows(f"PRAGMA {name}")[0][0]
            for name in ("journal_mode", "foreign_keys", "synchronous", "busy_timeout")
        }
        assert pragmas == {
            "journal_mode": "wal",
            "foreign_keys": 1,
            "synchronous": 1,  # NORMAL
            "busy_timeout": 30_000,
        }
        assert history._db.conn.isolation_level is None


def test_reopening_applies_nothing_and_keeps_the_runs(db_url):
    with History.open(db_url) as history:
        save(history)
    recorded = raw(db_url, "SELECT name, applied_at FROM schema_migrations ORDER BY name")
    with History.open(db_url) as again:
        assert again.applied == ()
        assert [r.run_id for r in again.runs()] == [1]
    assert raw(db_url, "SELECT name, applied_at FROM schema_migrations ORDER BY name") == recorded


def test_a_newer_schema_is_refused_and_left_unchanged(db_url):
    with History.open(db_url) as history:
        save(history)
    newer = make_newer(db_url)
    before = snapshot(db_url)
    message = rf"newer auditor \(schema {newer}, this one knows {len(MIGRATIONS)}\)"
    with pytest.raises(HistoryError, match=message):
        History.open(db_url)
    assert snapshot(db_url) == before


@pytest.mark.parametrize("version", range(len(MIGRATIONS)))
def test_a_history_of_every_earlier_version_is_migrated_with_its_runs(db_url, version):
    """A database left at ``version`` (its runs written with the tables of then) opens
    with the missing migrations applied, its runs readable, and takes new runs."""
    location = locate(db_url)
    database, _ = _connect_at(location, version)
    if version >= 1:  # a run in the tables of the first version
        database.execute(
            "INSERT INTO sites (id, origin, created_at) VALUES (1, 'https://old.example', ?)",
            ("2026-01-01T00:00:00.000000+00:00",),
        )
        database.execute(
            "INSERT INTO runs (id, site_id, started_at, finished_at, verdict, recheck_days,"
            " result) VALUES (1, 1, ?, ?, 'trusted', NULL, '{}')",
            ("2026-01-01T00:00:00.000000+00:00", "2026-01-01T00:01:00.000000+00:00"),
        )
    database.close()
    with History.open(db_url) as history:
        assert history.applied == NAMES[version:]
        old = [(r.run_id, r.site, r.verdict) for r in history.runs()]
        assert old == ([(1, "https://old.example", "trusted")] if version else [])
        assert save(history, started=STARTED) == len(old) + 1
        assert len(history.runs()) == len(old) + 1
    assert len(raw(db_url, "SELECT name FROM schema_migrations")) == len(MIGRATIONS)


def _connect_at(location, version):  # type: ignore[no-untyped-def]
    """A database with only the first ``version`` migrations applied."""
    import auditor.history.db as db

    database = db._open(location)
    database.prepare()
    return database, migrate(database, upto=version)


def test_the_auditor_db_variable_may_name_either_kind(db_url, monkeypatch):
    monkeypatch.setenv("AUDITOR_DB", db_url)
    with History.open() as history:
        save(history)
        assert history.dialect == ("postgresql" if is_postgres(db_url) else "sqlite")
    with History.open(db_url) as history:
        assert [r.run_id for r in history.runs()] == [1]


@pytest.mark.parametrize(
    "content",
    [b"not a database at all\n" * 100, b"SQLite format 3\x00" + b"\xff" * 4080, b"\x00" * 4096],
    ids=["text", "damaged-header", "zeros"],
)
def test_a_file_that_is_not_sqlite_is_refused_and_left_unchanged(tmp_path, content):
    path = tmp_path / "h.sqlite3"
    path.write_bytes(content)
    with pytest.raises(HistoryError, match="damaged or not a SQLite database") as error:
        History.open(path)
    assert isinstance(error.value, AuditorError)
    assert isinstance(error.value.__cause__, sqlite3.DatabaseError)
    assert _snapshot(path) == {"h.sqlite3": content}


def test_a_truncated_history_is_refused_and_left_unchanged(tmp_path):
    path = tmp_path / "h.sqlite3"
    with History.open(path) as history:
        for _ in range(3):
            save(history)
    path.write_bytes(path.read_bytes()[: 3 * 4096])
    before = _snapshot(path)
    with pytest.raises(HistoryError, match="damaged"), History.open(path) as history:
        history.pages(3)
        history.latest_entries("https://example.com")
    assert _snapshot(path) == before


def test_someone_elses_database_is_refused_and_left_unchanged(db_url):
    raw(db_url, "CREATE TABLE notes (body TEXT)")
    raw(db_url, "INSERT INTO notes VALUES ('mine')")
    before = snapshot(db_url)
    with pytest.raises(HistoryError, match=r"of something else \(tables: notes\)"):
        History.open(db_url)
    assert snapshot(db_url) == before


def test_an_empty_file_is_a_new_database(tmp_path):
    path = tmp_path / "h.sqlite3"
    path.touch()
    with History.open(path) as history:
        assert history.applied == NAMES


def test_a_folder_where_the_file_should_be_is_a_history_error(tmp_path):
    with pytest.raises(HistoryError):
        History.open(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(HistoryError, match="cannot create the folder"):
        History.open(blocker / "sub" / "h.sqlite3")


def test_the_argument_wins_then_auditor_db_then_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("AUDITOR_DB", str(tmp_path / "env" / "from-env.sqlite3"))
    with History.open(tmp_path / "arg.sqlite3") as history:
        assert history.path == tmp_path / "arg.sqlite3"
    with History.open() as history:
        assert history.path == tmp_path / "env" / "from-env.sqlite3"
    assert history.path.is_file()  # the parent folder was created
    monkeypatch.setenv("AUDITOR_DB", "")
    with History.open() as history:
        assert history.path == tmp_path / "xdg" / "auditor" / "history.sqlite3"
        assert history.path.is_file()


def test_the_default_path_honours_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "auditor" / "history.sqlite3"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for unusable in ("", "relative/path"):  # the XDG spec: relative paths are ignored
        monkeypatch.setenv("XDG_DATA_HOME", unusable)
        expected = tmp_path / "home" / ".local" / "share" / "auditor" / "history.sqlite3"
        assert default_db_path() == expected
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_db_path() == expected


def _old_database(path: Path) -> None:
    """A history as auditor wrote it before page changes were kept: one run, one page."""
    from auditor.history.db import MIGRATIONS as ALL

    with sqlite3.connect(path) as conn:
        for statement in ALL[0].statements:
            conn.execute(statement)
        conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
        conn.execute("INSERT INTO schema_migrations VALUES ('0001-initial', '2026-01-01')")
        conn.execute("INSERT INTO sites VALUES (1, 'https://example.com', '2026-01-01')")
        conn.execute(
            "INSERT INTO runs VALUES (1, 1, '2026-01-01T00:00:00.000000+00:00',"
            " '2026-01-01T00:01:00.000000+00:00', 'inconclusive', NULL, '{}')"
        )
        conn.execute(
            "INSERT INTO pages (run_id, position, loc, sitemap, stratum, fetched_at, fp_exact,"
            " truncated, extra) VALUES (1, 0, 'https://example.com/a', 'https://example.com/s.xml',"
            " 'newest', '2026-01-01T00:00:30.000000+00:00', 'ab', 0, '{}')"
        )
        conn.execute("PRAGMA user_version = 1")
    conn.close()


def test_an_old_history_is_migrated_and_its_pages_read_without_blocks(tmp_path):
    path = tmp_path / "old.sqlite3"
    _old_database(path)
    with History.open(path) as history:
        assert history.applied == NAMES[1:]
        (old,) = history.pages(1)
        assert old.fp_exact == "ab" and old.fp_blocks is None and old.content_changed is None
        run_id = save(history)
        assert history.pages(run_id) == pages()
    recorded = raw(str(path), "SELECT name FROM schema_migrations ORDER BY name")
    assert [name for (name,) in recorded] == list(NAMES)
