"""The history operations a fleet of 100,000 sites runs daily, each timed in a child process.

``python3 tests/benchmarks/history_ops.py OP DB`` runs one operation on the history ``DB``
and prints one JSON line: ``{"op", "seconds", "cpu", "rows", "peak_mb"}`` (wall and CPU
seconds of the process: a PostgreSQL server's own CPU is not counted; peak RSS of the
process, the interpreter and its imports included). Every child runs under an address
space limit (``LIMIT_GB``), so an operation that would load a whole history fails with a
MemoryError instead of taking the machine down. Run by ``bench_history.py --fleet``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
if os.environ.get("AUDITOR_CODE"):  # bench_history.py's --code: that checkout's auditor
    sys.path.insert(0, os.environ["AUDITOR_CODE"])

from auditor.history import History
from tests.benchmarks.history_fleet import site_name
from tests.history.helpers import STARTED

LIMIT_GB = 8
#: Sites planned together to time ``plan`` for all (then extrapolated, said so).
PLAN_SUBSET = 200
NOW = STARTED
ONE = 1  # site_name(ONE): the site one-site operations read


def _sites(history: History) -> int:
    return len(history.sites())


def _due(history: History) -> int:
    return len(history.due_sites(NOW))


def _plan(sites: list[str] | None) -> Callable[[History], int]:
    def run(history: History) -> int:
        from auditor.planner import plan

        return sum(1 for _ in plan(history, sites, now=NOW, walk=False))

    return run


def _plan_cli(history: History) -> int:
    """``auditor plan --no-walk`` for every site, its JSON Lines to /dev/null (what is
    timed is planning and writing the lines, not a disk): the lines written."""
    import contextlib

    from auditor.cli import main

    url = os.environ["HISTORY_URL"]
    with open(os.devnull, "w") as sink, _Counting(sink) as out, contextlib.redirect_stdout(out):
        if main(["plan", "--no-walk", "--quiet", "--db", url]) != 0:
            raise SystemExit("auditor plan failed")
    return out.lines


class _Counting:
    """A text sink that counts the lines written to it."""

    def __init__(self, sink: Any) -> None:
        self.sink, self.lines = sink, 0

    def __enter__(self) -> _Counting:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sink.flush()

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return int(self.sink.write(text))

    def flush(self) -> None:
        self.sink.flush()


def _changed(history: History) -> int:
    from auditor.changed import recrawl_list

    return sum(1 for _ in recrawl_list(history, site_name(ONE), NOW - timedelta(days=30)))


def _index(history: History) -> int:
    from auditor.report import write_fleet_index

    with tempfile.TemporaryDirectory() as folder:
        path = write_fleet_index(history, Path(folder), {})
        return sum(f.stat().st_size for f in path.parent.rglob("*.html"))


def _view(sql: str, *params: Any) -> Callable[[History], int]:
    def run(history: History) -> int:
        return sum(len(batch) for batch in history._db.stream(sql, params, 5_000))

    return run


def _export(fmt: str) -> Callable[[History], int]:
    def run(history: History) -> int:
        from auditor.report import export_tables

        with tempfile.TemporaryDirectory() as folder:
            return sum(p.stat().st_size for p in export_tables(history, fmt, Path(folder)))

    return run


OPS: dict[str, Callable[[History], int]] = {
    "sites": _sites,
    "due": _due,
    "plan-one": _plan([site_name(ONE)]),
    "plan-subset": _plan([site_name(n) for n in range(0, 500 * PLAN_SUBSET, 500)]),
    "plan-2000": _plan([site_name(n) for n in range(0, 100_000, 50)]),
    "plan-all": _plan(None),
    "plan-cli": _plan_cli,
    "changed": _changed,
    "index": _index,
    "view-sites": _view("SELECT * FROM latest_site_verdicts"),
    "view-sites-one": _view("SELECT * FROM latest_site_verdicts WHERE site = ?", site_name(ONE)),
    "view-segments": _view("SELECT * FROM latest_segment_verdicts"),
    "view-segments-one": _view(
        "SELECT * FROM latest_segment_verdicts WHERE site = ?", site_name(ONE)
    ),
    "export": _export("csv"),
    "export-parquet": _export("parquet"),
    "export-json": _export("json"),
}


def main(argv: list[str]) -> int:
    op, url = argv
    limit = LIMIT_GB << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.environ["HISTORY_URL"] = url
    opened = time.perf_counter()
    with History.open(url) as history:
        migrated = time.perf_counter() - opened
        started, cpu = time.perf_counter(), time.process_time()
        try:
            rows: int | str = OPS[op](history)
        except MemoryError:
            rows = f"MemoryError at {LIMIT_GB} GB"
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    timed = {"seconds": round(seconds, 3), "cpu": round(cpu, 3)}
    print(json.dumps({"op": op, **timed, "rows": rows, "peak_mb": round(peak),
                      "open": round(migrated, 3)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
