"""History: a 1,000,000-URL run saved and loaded on SQLite and on PostgreSQL, as a ratio.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_history.py

Builds an inventory like a real large site (20 sub-sitemaps, URLs with slugs, lastmod
to the second or the microsecond over a year, one URL in ten undated), then, best of
``--repeat``: encodes it to the url_state blob and decodes it back (checked equal once).
Then, on each backend in turn (a fresh SQLite file in a temp dir; a fresh database on a
PostgreSQL server this script starts in a temp dir, fsync on, as a real one has it):
saves whole runs carrying it (timing the whole ``save_run`` and the write transaction
inside it, i.e. how long other writers wait) and reads ``latest_entries`` back (checked
equal). Last, ``db copy`` of that history from SQLite to PostgreSQL and back. Prints
seconds and the ratios PostgreSQL / SQLite (target: within 2x).

``--fleet``: a history of ``--sites`` sites x ``--runs`` runs (``history_fleet.py``, bulk
inserts) on each backend, kept in ``--keep DIR`` (a SQLite file and a PostgreSQL cluster,
reused by the next run with the same DIR), then every daily operation of a fleet
(``history_ops.py``: reverify's due sites, plan for one site and for a subset, changed, the
fleet index, the latest-verdict views, export), each in a child process: seconds and peak
RSS. ``--ops`` picks some; ``--code DIR`` runs them with another checkout's auditor (the
code before a change), on the same histories.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.history import History, decode_state, encode_state
from auditor.history.copy import copy_history
from tests.benchmarks.history_fleet import build
from tests.benchmarks.history_ops import OPS
from tests.history.helpers import files, large_inventory, pages, result
from tests.pgserver import PostgresServer, unavailable

SITE = "https://www.example.com"
TARGET = 2.0


def _best(repeat: int, function, *args):  # type: ignore[no-untyped-def]
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = function(*args)
        times.append(time.perf_counter() - started)
    return value, min(times)


def _timed_transactions(history: History, spent: list[float]) -> None:
    """Record how long each write transaction of ``history`` lasts (lock to commit)."""
    write = history._db.write

    @contextmanager
    def timed() -> Iterator[None]:
        started = time.perf_counter()
        with write():
            yield
        spent.append(time.perf_counter() - started)

    history._db.write = timed  # type: ignore[method-assign]


def _save_and_load(url: str, frame: pd.DataFrame, repeat: int) -> dict[str, float]:
    with History.open(url) as history:
        transactions: list[float] = []
        _timed_transactions(history, transactions)
        saves = []
        for i in range(repeat):
            run = replace(result(SITE), started_at=datetime.now(UTC) + timedelta(seconds=i))
            started = time.perf_counter()
            history.save_run(run, files=files(SITE), entries=frame, pages=pages(SITE) * 100)
            saves.append(time.perf_counter() - started)
        back, load = _best(repeat, history.latest_entries, SITE)
        pd.testing.assert_frame_equal(back, frame)
        _, pages_load = _best(repeat, history.pages, repeat)
    return {"save": min(saves), "lock": min(transactions), "load": load, "pages": pages_load}


def _copy(source: str, target: str) -> float:
    with History.open(source) as a, History.open(target) as b:
        started = time.perf_counter()
        copy_history(a, b)
        return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fleet", action="store_true", help="the fleet's daily operations")
    parser.add_argument("--sites", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pages", type=int, default=20, help="sampled pages a run")
    parser.add_argument("--keep", type=Path, default=Path("/tmp/auditor-history-fleet"))
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args(argv)
    if args.fleet:
        return fleet(args)
    frame = large_inventory(args.urls)
    blob, encode = _best(args.repeat, encode_state, frame)
    back, decode = _best(args.repeat, decode_state, blob)
    pd.testing.assert_frame_equal(back, frame)
    raw = sum(len(s.encode()) + 1 for s in frame["loc"]) + 8 * len(frame)
    print(f"{args.urls:,} URLs, best of {args.repeat}")
    print(f"encode {encode:.3f} s, decode {decode:.3f} s")
    print(f"blob {len(blob):,} bytes ({len(blob) / args.urls:.1f} B/URL; locs+int64 {raw:,})")
    why = unavailable()
    if why is not None:
        print(f"PostgreSQL skipped: {why}")
    with tempfile.TemporaryDirectory() as folder:
        sqlite_url = str(Path(folder) / "h.sqlite3")
        figures = {"sqlite": _save_and_load(sqlite_url, frame, args.repeat)}
        server = PostgresServer(durable=True) if why is None else None
        try:
            if server is not None:
                pg_url = server.new_database("auditor")
                figures["postgresql"] = _save_and_load(pg_url, frame, args.repeat)
                to_pg = _copy(sqlite_url, server.new_database("auditor"))
                to_sqlite = _copy(pg_url, str(Path(folder) / "copy.sqlite3"))
        finally:
            if server is not None:
                server.stop()
    print("save_run (its write transaction), latest_entries, pages of a 300-page sample:")
    for name, f in figures.items():
        print(
            f"  {name:<10} save {f['save']:.3f} s ({f['lock']:.3f} s), "
            f"load {f['load']:.3f} s, pages {f['pages'] * 1000:.1f} ms"
        )
    if "postgresql" in figures:
        pg, lite = figures["postgresql"], figures["sqlite"]
        for key in ("save", "load"):
            ratio = pg[key] / lite[key]
            verdict = "ok" if ratio <= TARGET else "MISSED"
            print(f"  postgresql / sqlite, {key}: {ratio:.2f} (target <= {TARGET:g}: {verdict})")
        # SQLite (WAL, synchronous NORMAL) does not sync at commit; PostgreSQL does.
        print(f"  postgresql / sqlite, write transaction: {pg['lock'] / lite['lock']:.2f}")
        print(f"db copy ({args.repeat} runs): sqlite -> postgresql {to_pg:.3f} s, "
              f"postgresql -> sqlite {to_sqlite:.3f} s")  # fmt: skip
    return 0


class KeptServer(PostgresServer):
    """A PostgreSQL cluster in a folder that outlives the benchmark (made once, started
    again by the next run, stopped but never deleted)."""

    def __init__(self, folder: Path) -> None:
        import shutil

        from tests.pgserver import _RUN_AS, SUPERUSER, find_bindir

        self.bindir = find_bindir()  # type: ignore[assignment]
        self.folder, self.data, self.port = folder, folder / "data", 0
        if not self.data.exists():
            folder.mkdir(parents=True, exist_ok=True)
            shutil.chown(folder, _RUN_AS, _RUN_AS)
            self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust",
                      "-E", "UTF8", "--locale=C", "--no-instructions")  # fmt: skip
        self._start(durable=True)

    def stop(self) -> None:
        subprocess.run(
            self._command("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"),
            capture_output=True,
        )


def _built(url: str, sites: int, runs: int, pages: int) -> None:
    with History.open(url) as history:
        if history.sites():
            return
        started = time.perf_counter()
        build(history, sites, runs, pages)
        if history.dialect == "postgresql":
            history._db.execute("ANALYZE")  # as autovacuum would after a bulk load
        print(f"  built {history.dialect}: {time.perf_counter() - started:.0f} s", flush=True)


def _op(code: Path, op: str, url: str) -> dict[str, object]:
    here = Path(__file__).resolve().parent / "history_ops.py"
    env = {**os.environ, "AUDITOR_CODE": str(code)}
    done = subprocess.run([sys.executable, str(here), op, url], capture_output=True,
                          text=True, env=env)  # fmt: skip
    if done.returncode:
        return {"op": op, "seconds": None, "rows": done.stderr.strip().splitlines()[-1:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def fleet(args: argparse.Namespace) -> int:
    """Build (or reuse) the fleet histories and time each operation on each backend."""
    args.keep.mkdir(parents=True, exist_ok=True)
    backends = args.backends.split(",")
    server = KeptServer(args.keep / "pg") if "postgresql" in backends else None
    try:
        urls = {}
        if "sqlite" in backends:
            urls["sqlite"] = str(args.keep / "history.sqlite3")
        if server is not None:
            name = f"fleet_{args.sites}_{args.runs}_{args.pages}"
            server.role("auditor")
            exists = f"SELECT 1 FROM pg_database WHERE datname = '{name}'"
            import psycopg

            with psycopg.connect(server.url(), autocommit=True) as conn:
                if not conn.execute(exists).fetchall():  # type: ignore[arg-type]
                    conn.execute(f'CREATE DATABASE "{name}" OWNER auditor')  # type: ignore[arg-type]
            urls["postgresql"] = server.url(name, "auditor")
        print(
            f"{args.sites:,} sites x {args.runs} runs x {args.pages} pages; code {args.code}",
            flush=True,
        )
        for url in urls.values():
            _built(url, args.sites, args.runs, args.pages)
        print(f"{'operation':18s} {'backend':10s} {'s':>9s} {'cpu s':>9s} {'peak MB':>8s}  rows")
        for op in filter(None, args.ops.split(",")):
            for backend, url in urls.items():
                f = _op(args.code, op, url)
                secs = "-" if f["seconds"] is None else f"{f['seconds']:.3f}"
                cpu = f"{f['cpu']:.3f}" if f.get("cpu") is not None else "-"
                print(f"{op:18s} {backend:10s} {secs:>9s} {cpu:>9s} {f.get('peak_mb', '-')!s:>8s}"
                      f"  {f['rows']}", flush=True)  # fmt: skip
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
