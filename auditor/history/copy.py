"""Moving house: a whole history copied from one database to another (SQLite to
PostgreSQL and back), verified before it is committed.

The copy runs in one write transaction on the target (holding its write lock) while the
source is read in one snapshot, so it is whole or absent: the target is never left
half-filled, and a writer saving into the source meanwhile is either copied entirely or
not at all. Before the commit, the target is counted table by table and run by run
against the source; any difference rolls everything back. A target that holds any row
is refused unless ``replace`` is given, which empties it in the same transaction.

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from auditor.errors import HistoryError
from auditor.history.backend import Database
from auditor.history.store import History

__all__ = ["CopySummary", "copy_history"]

#: Tables every other one depends on, copied first (and emptied last).
_FIRST = ("sites", "runs", "fleets")
#: Rows read and written at a time: url_state rows are a whole inventory each (about 11
#: MB for a million URLs), so they go one by one.
_BATCH, _BATCHES = 2_000, {"url_state": 1, "plan_walks": 1}


@dataclass(frozen=True)
class CopySummary:
    """What was copied: runs and sites, and the rows of every table."""

    source: str
    target: str
    runs: int
    sites: int
    rows: dict[str, int] = field(default_factory=dict)
    replaced: int = 0  # runs the target held before, now replaced


def copy_history(
    source: History,
    target: History,
    *,
    replace: bool = False,
    on_progress: Callable[[str], None] | None = None,
) -> CopySummary:
    """Copy every row of ``source`` into ``target`` (both open, so both migrated to this
    auditor's schema); a summary of what was copied and checked.

    HistoryError when the source holds no run, when the target holds anything and
    ``replace`` is false, when both are the same database, when a table's columns differ,
    or when the counts after the copy differ (then nothing was written)."""
    if str(source.location) == str(target.location):
        raise HistoryError(f"{source.location}: source and target are the same database")
    src, dst = source._db, target._db
    tables = _tables(src, dst)
    if not _count(src, "runs"):
        raise HistoryError(f"{source.location} holds no run: nothing to copy")
    say = on_progress or (lambda message: None)
    with dst.write():
        held = _count(dst, "runs"), sum(_count(dst, table) for table in tables)
        if held[1] and not replace:
            raise HistoryError(
                f"{target.location} is not empty ({held[0]} runs, {held[1]} rows): "
                "nothing was copied (give --force to replace its whole history)"
            )
        for table in reversed(tables):
            dst.execute(f"DELETE FROM {table}")
        with src.snapshot():
            for table in tables:
                say(f"copying {table}")
                _copy_table(src, dst, table)
            expected = _census(src, tables)
        if _census(dst, tables) != expected:
            raise HistoryError(
                f"the copy into {target.location} does not match {source.location} "
                f"(rows or runs differ): nothing was written"
            )
    say("copied and verified")
    return CopySummary(
        source=str(source.location),
        target=str(target.location),
        runs=expected["runs"][0],
        sites=expected["sites"][0],
        rows={table: counts[0] for table, counts in expected.items()},
        replaced=held[0],
    )


def _tables(src: Database, dst: Database) -> list[str]:
    """The tables to copy, those others depend on first: those of both sides (both are at
    this auditor's schema, so a table on one side only is not auditor's: a team's own
    table beside the history is left alone). Their columns must be the same."""
    names = sorted(set(src.tables()) & set(dst.tables()))
    for table in names:
        if sorted(src.columns(table)) != sorted(dst.columns(table)):
            raise HistoryError(f"{src.location} and {dst.location} differ in table {table}")
    return [*(t for t in _FIRST if t in names), *(t for t in names if t not in _FIRST)]


def _copy_table(src: Database, dst: Database, table: str) -> None:
    columns = dst.columns(table)
    size = _BATCHES.get(table, _BATCH)
    for batch in src.stream(f"SELECT {', '.join(columns)} FROM {table}", size=size):
        dst.insert_rows(table, columns, batch)


def _count(db: Database, table: str) -> int:
    return int(db.rows(f"SELECT count(*) FROM {table}")[0][0])


def _census(db: Database, tables: list[str]) -> dict[str, tuple[int, tuple[tuple[int, int], ...]]]:
    """Each table's row count and, where rows belong to runs, the rows of every run."""
    census = {}
    for table in tables:
        per_run: tuple[tuple[int, int], ...] = ()
        if "run_id" in db.columns(table):
            rows = db.rows(f"SELECT run_id, count(*) FROM {table} GROUP BY run_id")
            per_run = tuple(sorted((int(run), int(n)) for run, n in rows))
        census[table] = (_count(db, table), per_run)
    census["runs"] = (census["runs"][0], tuple(
        (int(run_id), 1) for (run_id,) in sorted(db.rows("SELECT id FROM runs"))
    ))  # fmt: skip
    return census
