"""Export memory against the history's size: it must not grow with the tables.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_export.py [--sites 100,1000]

Builds a synthetic history per size (``history_fleet.py``: ``--sites`` sites x 10 runs x 20
pages, so 100 sites are 20,000 page rows and 1,000 sites 200,000), on SQLite (and
PostgreSQL with ``--backends sqlite,postgresql``), then exports it in each format, each in a
child process: seconds, the peak of Python's allocations under ``tracemalloc`` (numpy and
pandas buffers included; Arrow's own allocator is not traced) and the peak RSS (all of it,
the imports included). Prints the ratio of the largest size's peaks to the smallest's.
``--size`` sets the rows of a chunk (50,000 by default: at 20,000 page rows the pages are
one chunk). ``--code DIR`` exports with another checkout's auditor whose ``export_tables``
takes no ``size`` (the code before a change): leave ``--size`` out then.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
if os.environ.get("AUDITOR_CODE"):  # --code: that checkout's auditor
    sys.path.insert(0, os.environ["AUDITOR_CODE"])

from auditor.history import History
from tests.pgserver import PostgresServer

FORMATS = ("csv", "parquet", "json")


def child(fmt: str, url: str, trace: bool, size: int | None) -> None:
    """Export the history at ``url`` in ``fmt`` and print its figures as one JSON line."""
    from auditor.report import export_tables

    with History.open(url) as history, tempfile.TemporaryDirectory() as folder:
        if trace:
            tracemalloc.start()
        started = time.perf_counter()
        chunks = {} if size is None else {"size": size}
        written = export_tables(history, fmt, Path(folder), **chunks)
        seconds = time.perf_counter() - started
        traced = tracemalloc.get_traced_memory()[1] if trace else 0
        total = sum(p.stat().st_size for p in written)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": round(seconds, 2), "traced_mb": round(traced / 2**20, 1),
                      "rss_mb": round(rss), "bytes": total}))  # fmt: skip


def _run(code: Path, fmt: str, url: str, trace: bool, size: int | None) -> dict[str, float]:
    env = {**os.environ, "AUDITOR_CODE": str(code)}
    args = [sys.executable, __file__, "--child", fmt, url]
    args += (["--trace"] if trace else []) + ([] if size is None else ["--size", str(size)])
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _history(folder: Path, backend: str, sites: int, server: PostgresServer | None) -> str:
    from tests.benchmarks.history_fleet import build

    if backend == "sqlite":
        url = str(folder / f"h{sites}.sqlite3")
    else:
        assert server is not None
        url = server.new_database("auditor")
    with History.open(url) as history:
        build(history, sites, 10, 20)
    return url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", default="100,1000")
    parser.add_argument("--backends", default="sqlite")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--child", nargs=2, metavar=("FORMAT", "URL"))
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--size", type=int, help="rows a chunk (default 50,000)")
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child, args.trace, args.size)
        return 0
    sizes = [int(n) for n in args.sites.split(",")]
    server = PostgresServer() if "postgresql" in args.backends else None
    try:
        with tempfile.TemporaryDirectory() as folder:
            _measure(args, sizes, Path(folder), server)
    finally:
        if server is not None:
            server.stop()
    return 0


def _measure(
    args: argparse.Namespace, sizes: list[int], folder: Path, server: PostgresServer | None
) -> None:
    print(f"{'backend':10s} {'format':8s} {'page rows':>10s} {'s':>8s} {'traced MB':>10s} "
          f"{'RSS MB':>7s}")  # fmt: skip
    for backend in args.backends.split(","):
        urls = {n: _history(folder, backend, n, server) for n in sizes}
        for fmt in args.formats.split(","):
            peaks = []
            for n, url in urls.items():
                timed = _run(args.code, fmt, url, False, args.size)
                traced = _run(args.code, fmt, url, True, args.size)
                peaks.append(traced["traced_mb"])
                figures = f"{timed['seconds']:>8.2f} {traced['traced_mb']:>10.1f}"
                print(f"{backend:10s} {fmt:8s} {n * 200:>10,} {figures} {timed['rss_mb']:>7.0f}")
            print(f"  traced peak, largest / smallest: {peaks[-1] / peaks[0]:.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
