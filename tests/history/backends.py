"""Reaching a history database behind auditor's back, on either backend: raw SQL, a
byte-exact snapshot, and a version from the future."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from auditor.history import MIGRATIONS
from tests.pgserver import find_bindir


def is_postgres(url: str) -> bool:
    return url.startswith("postgresql://")


def raw(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement in its own transaction, committed; its rows (if any)."""
    if is_postgres(url):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            cursor = conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []
    conn = sqlite3.connect(url)
    try:
        with conn:
            return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def make_newer(url: str) -> int:
    """Mark the history as made by a newer auditor; the version it now has."""
    newer = len(MIGRATIONS) + 1
    if is_postgres(url):
        raw(url, "INSERT INTO schema_migrations VALUES ('9999-from-the-future', 'later')")
    else:
        raw(url, f"PRAGMA user_version = {newer}")
    return newer


def snapshot(url: str) -> dict[str, bytes]:
    """Everything the database holds: the files of a SQLite history (and whatever lies
    beside them), or ``pg_dump`` of the PostgreSQL database (schema and rows)."""
    if is_postgres(url):
        bindir = find_bindir()
        assert bindir is not None
        dump = subprocess.run(
            [str(bindir / "pg_dump"), "--no-owner", "--dbname", url],
            capture_output=True,
            check=True,
        ).stdout
        lines = dump.splitlines(keepends=True)  # \restrict KEY: a new random key each time
        return {"pg_dump": b"".join(x for x in lines if not x.startswith(b"\\"))}
    path = Path(url)
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir()) if p.is_file()}
