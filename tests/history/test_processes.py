"""History across processes, on both backends: a child killed mid-save, processes
opening a new database at once, and eight writers at once while another is killed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd

from auditor.history import MIGRATIONS, History
from tests.history.backends import is_postgres, raw
from tests.history.helpers import entries, files, pages, result

ROOT = Path(__file__).resolve().parents[2]

# Makes the child's next save stop right before COMMIT, every row of the run written
# (on SQLite, spilled to the WAL file by a tiny page cache), and wait there to be killed.
_HANG_BEFORE_COMMIT = """
def hang_before_commit(history):
    import time
    if history.dialect == "sqlite":
        history._db.execute("PRAGMA cache_size = 5")
    replace_state = history._replace_state

    def then_hang(*args):
        replace_state(*args)  # the last statement of a save: COMMIT comes next
        print("committing", flush=True)
        time.sleep(120)

    history._replace_state = then_hang
"""

# Saves one run, then a second (a big one) whose COMMIT never comes.
_KILLED_CHILD = (
    _HANG_BEFORE_COMMIT
    + """
import sys
from datetime import timedelta
from auditor.history import MIGRATIONS, History
from tests.history.helpers import STARTED, files, large_inventory, pages, result, save

history = History.open(sys.argv[1])
save(history)
print("saved", flush=True)
hang_before_commit(history)
later = result(started=STARTED + timedelta(days=1))
history.save_run(later, files=files(), entries=large_inventory(20_000), pages=pages() * 50)
print("committed: the test is broken", flush=True)
"""
)

# Says it is ready, waits for the go file, then opens the database.
_READY_SET_GO = """
import sys, time
from datetime import timedelta
from pathlib import Path
from auditor.history import MIGRATIONS, History
from tests.history.helpers import STARTED, save

url, go = sys.argv[1], Path(sys.argv[2])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.0005)
"""
# Opens a new database with others at the same instant (they all migrate it).
_OPENER = (
    _READY_SET_GO
    + """
with History.open(url) as history:
    assert history.runs() == []
print("done", flush=True)
"""
)
# Saves RUNS runs, its own site and the shared one in turn, printing each new run id.
_WRITER = (
    _READY_SET_GO
    + """
own, runs = sys.argv[3], int(sys.argv[4])
with History.open(url) as history:
    for i in range(runs):
        site = own if i % 2 else "https://shared.example"
        print("saved", save(history, site, started=STARTED + timedelta(seconds=i)), flush=True)
print("done", flush=True)
"""
)
# Saves two runs, then hangs before the third one's COMMIT, holding the write lock.
_VICTIM = (
    _READY_SET_GO
    + _HANG_BEFORE_COMMIT
    + """
history = History.open(url)
for i in range(2):
    print("saved", save(history, sys.argv[3], started=STARTED + timedelta(seconds=i)), flush=True)
hang_before_commit(history)
save(history, sys.argv[3], started=STARTED + timedelta(seconds=2))
print("committed: the test is broken", flush=True)
"""
)


def _child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _all_at_once(code: str, url: str, go: Path, *extra: tuple[str, ...]) -> list[str]:
    """Run one child per ``extra`` (its arguments), all released at once; each must end
    with done. Their outputs."""
    children = [_child(code, url, str(go), *args) for args in extra]
    for child in children:
        assert child.stdout.readline() == "ready\n", child.communicate()
    go.touch()
    outcomes = [child.communicate(timeout=300) for child in children]
    for child, (out, err) in zip(children, outcomes, strict=True):
        assert (child.returncode, out.splitlines()[-1:], err) == (0, ["done"], ""), err
    return [out for out, _ in outcomes]


def _integrity(url: str) -> str:
    if is_postgres(url):
        return "ok"  # the server's own business; what matters is checked by the tests
    conn = sqlite3.connect(url)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def _holding_the_lock(url: str) -> list[tuple[str, str]]:
    """PostgreSQL: (state, lock) of auditor's sessions holding an advisory lock."""
    return raw(
        url,
        "SELECT a.state, l.mode FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = 'auditor'",
    )


def test_a_child_killed_mid_save_loses_that_run_only(db_url):
    child = _child(_KILLED_CHILD, db_url)
    try:
        assert child.stdout.readline() == "saved\n", child.stderr.read()
        assert child.stdout.readline() == "committing\n", child.stderr.read()
        if is_postgres(db_url):  # mid-transaction, the write lock held
            assert _holding_the_lock(db_url) == [("idle in transaction", "ExclusiveLock")]
        else:  # the second run's pages reached the disk
            assert Path(db_url + "-wal").stat().st_size > 100_000
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert _integrity(db_url) == "ok"
    with History.open(db_url) as history:
        assert [run.run_id for run in history.runs()] == [1]
        assert len(history.pages(1)) == 3 and history.pages(2) == []
        back = history.latest_entries("https://example.com")
        assert back["loc"].tolist() == entries()["loc"].tolist()
        assert history.table("pages").shape[0] == 3
        # the lock died with the writer: the next save does not wait for it
        again = history.save_run(result(), files=files(), entries=entries(), pages=pages())
        assert again == 2
    assert _integrity(db_url) == "ok"


def test_processes_opening_a_new_database_at_once_all_succeed(db_url, tmp_path):
    _all_at_once(_OPENER, db_url, tmp_path / "go", *[() for _ in range(4)])
    with History.open(db_url) as history:  # one migrated, the others waited and saw it done
        assert history.applied == ()
        if history.dialect == "sqlite":
            assert history._db.rows("PRAGMA journal_mode") == [("wal",)]
    assert _integrity(db_url) == "ok"


def _saved(out: str) -> list[int]:
    return [int(line.split()[1]) for line in out.splitlines() if line.startswith("saved ")]


def test_eight_writers_at_once_and_one_killed_mid_save(db_url, tmp_path):
    """8 processes x 25 runs into one history while a ninth, holding the write lock in
    the middle of a save, is killed: every finished run is there exactly once (its rows
    whole and its own), none other, ids unique and in each writer's order."""
    go, writers, runs = tmp_path / "go", 8, 25
    victim = _child(_VICTIM, db_url, str(go), "https://victim.example")
    assert victim.stdout.readline() == "ready\n", victim.communicate()
    own = [f"http://127.0.0.{k + 1}:8000" for k in range(writers)]
    children = [_child(_WRITER, db_url, str(go), site, str(runs)) for site in own]
    for child in children:
        assert child.stdout.readline() == "ready\n", child.communicate()
    go.touch()
    victim_saved = [int(victim.stdout.readline().split()[1]) for _ in range(2)]
    assert victim.stdout.readline() == "committing\n", victim.communicate()
    time.sleep(0.5)  # the writers queue behind the lock the victim holds
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    outcomes = [child.communicate(timeout=300) for child in children]
    for child, (out, err) in zip(children, outcomes, strict=True):
        assert (child.returncode, out.splitlines()[-1:], err) == (0, ["done"], ""), err
    per_writer = [_saved(out) for out, _ in outcomes]
    for ids in per_writer:
        assert len(ids) == runs and ids == sorted(ids)  # in the order each writer saved
    finished = sorted(victim_saved + [i for ids in per_writer for i in ids])
    assert finished == list(range(1, writers * runs + 3))  # unique, and no other run
    assert _integrity(db_url) == "ok"
    with History.open(db_url) as history:
        assert sorted(r.run_id for r in history.runs()) == finished
        counts = {site.origin: site.runs for site in history.sites()}
        assert counts == {
            **dict.fromkeys(own, runs // 2),
            "https://shared.example": writers * (runs - runs // 2),
            "https://victim.example": 2,
        }
        _each_run_is_whole_and_its_own(history, finished)
        for site in counts:
            assert isinstance(history.latest_entries(site), pd.DataFrame)
        migrations = history._db.rows("SELECT count(*) FROM schema_migrations")[0][0]
        assert migrations == len(MIGRATIONS)


def _each_run_is_whole_and_its_own(history: History, run_ids: list[int]) -> None:
    sites = {r.run_id: r.site for r in history.runs()}
    for table, expected in (("sitemap_files", 4), ("segments", 2), ("pages", 3)):
        key = "url" if table == "sitemap_files" else "sitemap" if table == "segments" else "loc"
        rows = history._db.rows(f"SELECT run_id, position, {key} FROM {table}")
        by_run: dict[int, list[tuple[int, str]]] = {}
        for run_id, position, value in rows:
            by_run.setdefault(run_id, []).append((position, value))
        assert sorted(by_run) == run_ids, table
        for run_id, items in by_run.items():
            assert sorted(p for p, _ in items) == list(range(expected)), (table, run_id)
            assert all(v.startswith(sites[run_id] + "/") for _, v in items), (table, run_id)
    for run_id in run_ids:
        stored = history.result(run_id)
        assert stored is not None and stored["run_id"] == run_id
        assert stored["site"] == sites[run_id]
