"""A SQLite history on a full disk (a small tmpfs of its own): the save that does not fit
fails with a clear HistoryError, and the history stays whole (integrity_check, every
earlier run). SQLite only: a PostgreSQL server's disk is the server's business."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from auditor.errors import HistoryError
from auditor.history import History
from tests.history.helpers import entries, files, pages, result


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A 2 MB tmpfs mounted for the test (root only); skips saying why when it cannot."""
    folder = tmp_path / "disk"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _big_entries(n: int):  # type: ignore[no-untyped-def]
    frame = entries()
    grown = frame.loc[frame.index.repeat(n // len(frame) + 1)].head(n).reset_index(drop=True)
    grown["loc"] = [f"https://example.com/page-{i}-{'x' * 40}" for i in range(n)]
    return grown


def test_a_full_disk_fails_the_save_clearly_and_keeps_the_history_whole(small_disk):
    db = small_disk / "history.sqlite3"
    saved: list[int] = []
    with History.open(db) as history:
        with pytest.raises(HistoryError, match="full") as failure:
            for n in range(200):  # each run keeps a bigger inventory: the disk fills
                run = replace(result(), run_id=None)
                saved.append(
                    history.save_run(
                        run, files=files(), entries=_big_entries(2_000 * (n + 1)), pages=pages()
                    )
                )
        assert str(db) in str(failure.value)
    assert saved  # some runs fitted before the disk was full
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()
    with History.open(db) as history:
        assert [r.run_id for r in history.runs()] == saved
        assert all(len(history.pages(i)) == len(pages()) for i in saved)
