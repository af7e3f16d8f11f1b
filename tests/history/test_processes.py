"""History across processes: a child killed mid-save, and two writers at once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd

from auditor.history import MIGRATIONS, History
from tests.history.helpers import entries

ROOT = Path(__file__).resolve().parents[2]

# Saves one run, then a second whose COMMIT never comes: sqlite3's trace callback sees
# each statement as it starts, so the child stops right before COMMIT, every row of the
# second run written (and spilled to the WAL file by a tiny page cache), and waits there
# to be killed.
_KILLED_CHILD = """
import sys, time
from datetime import timedelta
from auditor.history import History
from tests.history.helpers import STARTED, files, large_inventory, pages, result, save

history = History.open(sys.argv[1])
save(history)
print("saved", flush=True)
history._conn.execute("PRAGMA cache_size = 5")

def hang(sql):
    if sql == "COMMIT":
        print("committing", flush=True)
        time.sleep(120)

history._conn.set_trace_callback(hang)
later = result(started=STARTED + timedelta(days=1))
history.save_run(later, files=files(), entries=large_inventory(20_000), pages=pages() * 50)
print("committed: the test is broken", flush=True)
"""

# Says it is ready, waits for the go file, then opens the database.
_READY_SET_GO = """
import sys, time
from datetime import timedelta
from pathlib import Path
from auditor.history import History
from tests.history.helpers import STARTED, save

path, go = sys.argv[1], Path(sys.argv[2])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.0005)
"""
# Opens a new database with others at the same instant (they all migrate it).
_OPENER = (
    _READY_SET_GO
    + """
with History.open(path) as history:
    assert history.runs() == []
print("done", flush=True)
"""
)
# Saves 20 runs: its own site and the shared one in turn.
_WRITER = (
    _READY_SET_GO
    + """
own = sys.argv[3]
with History.open(path) as history:
    for i in range(20):
        site = own if i % 2 else "https://shared.example"
        save(history, site, started=STARTED + timedelta(seconds=i))
print("done", flush=True)
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


def _all_at_once(code: str, path: Path, *extra: str) -> None:
    """Run one child per ``extra`` (or two), all released at once; each must print done."""
    go = path.with_name("go")
    children = [_child(code, str(path), str(go), arg) for arg in extra]
    for child in children:
        assert child.stdout.readline() == "ready\n", child.communicate()
    go.touch()
    outcomes = [child.communicate(timeout=300) for child in children]
    for child, (out, err) in zip(children, outcomes, strict=True):
        assert (child.returncode, out, err) == (0, "done\n", "")


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def test_a_child_killed_mid_save_loses_that_run_only(tmp_path):
    path = tmp_path / "h.sqlite3"
    child = _child(_KILLED_CHILD, str(path))
    try:
        assert child.stdout.readline() == "saved\n", child.stderr.read()
        assert child.stdout.readline() == "committing\n", child.stderr.read()
        wal = path.with_name(path.name + "-wal")
        assert wal.stat().st_size > 100_000  # the second run's pages reached the disk
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert _integrity(path) == "ok"
    with History.open(path) as history:
        assert [run.run_id for run in history.runs()] == [1]
        assert len(history.pages(1)) == 3 and history.pages(2) == []
        back = history.latest_entries("https://example.com")
        assert back["loc"].tolist() == entries()["loc"].tolist()
        assert history.table("pages").shape[0] == 3
    assert _integrity(path) == "ok"


def test_processes_opening_a_new_database_at_once_all_succeed(tmp_path):
    path = tmp_path / "h.sqlite3"
    _all_at_once(_OPENER, path, *"abcd")  # one migrates, the others wait and see it done
    with History.open(path) as history:
        assert history.applied == ()
        assert history._conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert _integrity(path) == "ok"


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "h.sqlite3"
    own = ["http://127.0.0.1:8001", "http://127.0.0.1:8002"]
    _all_at_once(_WRITER, path, *own)  # both open the new database and write at once
    assert _integrity(path) == "ok"
    with History.open(path) as history:
        runs = history.runs()
        assert len(runs) == 40 and sorted(r.run_id for r in runs) == list(range(1, 41))
        counts = {site.origin: site.runs for site in history.sites()}
        assert counts == {own[0]: 10, own[1]: 10, "https://shared.example": 20}
        assert len(history.table("pages")) == 40 * 3
        migrations = history._conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
        assert migrations == (len(MIGRATIONS),)  # each applied once, not once per process
        for site in counts:
            assert isinstance(history.latest_entries(site), pd.DataFrame)
