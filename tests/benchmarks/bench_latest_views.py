"""The latest-verdict views before and after migration ``0011-latest-views``, on one
synthetic fleet history a backend.

Run by hand, never by pytest::

    python3 tests/benchmarks/bench_latest_views.py --sites 10000 --keep /tmp/auditor-views

Builds (or reuses, in ``--keep DIR``) a history of ``--sites`` sites x ``--runs`` runs with
``history_fleet.py`` (``--pages`` sampled pages a run), on SQLite and on a PostgreSQL
cluster kept in ``DIR/pg`` (ANALYZE'd after the build, as autovacuum would), then times, for
each view, the old window-function query (the reference SQL of
``tests/history/test_latest_views.py``, run as a plain query) and the view as it is now:
one site's rows (``WHERE site = ?``), ``SELECT count(*)`` and every row fetched (in
batches of 5,000, a server-side cursor on PostgreSQL), each the best of ``--repeat``;
then whether the old query and the view give the same rows. Prints milliseconds and rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.history import History
from tests.benchmarks.bench_history import KeptServer, _built
from tests.benchmarks.history_fleet import site_name
from tests.history.test_latest_views import VIEWS, old_query

ONE = 1  # site_name(ONE): the site one-site queries read, as in history_ops.py


def _best(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    times, rows = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - started)
    return min(times), rows


def _measure(url: str, repeat: int) -> None:
    with History.open(url) as history:
        db = history._db

        def fetched(sql: str, *params: object) -> Callable[[], int]:
            return lambda: sum(len(batch) for batch in db.stream(sql, params, 5_000))

        def counted(sql: str) -> Callable[[], int]:
            return lambda: int(db.described(f"SELECT count(*) FROM ({sql}) x")[1][0][0])

        for view in VIEWS:
            queries = {"old": old_query(url, view), "new": f"SELECT * FROM {view}"}
            for label, sql in queries.items():
                source = f"({sql}) x" if label == "old" else view
                one = f"SELECT * FROM {source} WHERE site = ?"
                cases = (
                    ("one site", fetched(one, site_name(ONE))),
                    ("count(*)", counted(sql)),
                    ("full fetch", fetched(sql)),
                )
                for case, run in cases:
                    seconds, rows = _best(repeat, run)
                    print(f"{history.dialect:10s} {view:24s} {label:3s} {case:10s} "
                          f"{seconds * 1000:10.2f} ms  {rows:,} rows", flush=True)  # fmt: skip
            same = sorted(db.rows(queries["old"]), key=repr) == sorted(
                db.rows(queries["new"]), key=repr
            )
            print(f"{history.dialect:10s} {view:24s} old and new rows equal: {same}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pages", type=int, default=2, help="sampled pages a run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=Path("/tmp/auditor-latest-views"))
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args(argv)
    args.keep.mkdir(parents=True, exist_ok=True)
    backends = args.backends.split(",")
    name = f"fleet_{args.sites}_{args.runs}_{args.pages}"
    server = KeptServer(args.keep / "pg") if "postgresql" in backends else None
    try:
        urls = []
        if "sqlite" in backends:
            urls.append(str(args.keep / f"{name}.sqlite3"))
        if server is not None:
            server.role("auditor")
            import psycopg

            with psycopg.connect(server.url(), autocommit=True) as conn:
                exists = f"SELECT 1 FROM pg_database WHERE datname = '{name}'"
                if not conn.execute(exists).fetchall():  # type: ignore[arg-type]
                    conn.execute(f'CREATE DATABASE "{name}" OWNER auditor')  # type: ignore[arg-type]
            urls.append(server.url(name, "auditor"))
        print(f"{args.sites:,} sites x {args.runs} runs x {args.pages} pages", flush=True)
        for url in urls:
            _built(url, args.sites, args.runs, args.pages)
        for url in urls:
            _measure(url, args.repeat)
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
