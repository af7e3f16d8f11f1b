"""History: url_state of a 1,000,000-URL site, and saving runs that carry it.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_history.py

Builds an inventory like a real large site (20 sub-sitemaps, URLs with slugs, lastmod
to the second or the microsecond over a year, one URL in ten undated), then, best of
``--repeat``: encodes it to the url_state blob, decodes it back (checked equal once),
saves whole runs carrying it into a fresh SQLite file in a temp dir (timing the whole
``save_run`` and the transaction inside it, i.e. how long other writers wait), and reads
``latest_entries`` back. Prints seconds, bytes per URL and the sizes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.history import History, decode_state, encode_state
from tests.history.helpers import files, large_inventory, pages, result


def _best(repeat: int, function, *args):  # type: ignore[no-untyped-def]
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = function(*args)
        times.append(time.perf_counter() - started)
    return value, min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    frame = large_inventory(args.urls)
    blob, encode = _best(args.repeat, encode_state, frame)
    back, decode = _best(args.repeat, decode_state, blob)
    pd.testing.assert_frame_equal(back, frame)
    raw = sum(len(s.encode()) + 1 for s in frame["loc"]) + 8 * len(frame)
    print(f"{args.urls:,} URLs, best of {args.repeat}")
    print(f"encode {encode:.3f} s, decode {decode:.3f} s")
    print(f"blob {len(blob):,} bytes ({len(blob) / args.urls:.1f} B/URL; locs+int64 {raw:,})")
    with tempfile.TemporaryDirectory() as folder, History.open(Path(folder) / "h.sqlite3") as h:
        site, began = "https://www.example.com", [0.0]
        h._conn.set_trace_callback(  # when BEGIN IMMEDIATE starts: the write lock is asked for
            lambda sql: (
                began.__setitem__(0, time.perf_counter()) if sql.startswith("BEGIN") else None
            )
        )
        saves, locks = [], []
        for i in range(args.repeat):
            run = replace(result(site), started_at=datetime.now(UTC) + timedelta(seconds=i))
            started = time.perf_counter()
            h.save_run(run, files=files(site), entries=frame, pages=pages(site))
            saves.append(time.perf_counter() - started)
            locks.append(time.perf_counter() - began[0])
        _, read = _best(args.repeat, h.latest_entries, site)
        h.close()  # checkpoints the WAL into the file
        size = h.path.stat().st_size
    print(f"save_run {min(saves):.3f} s, of which the transaction (write lock) {min(locks):.3f} s")
    print(f"latest_entries {read:.3f} s")
    print(f"database after {args.repeat} runs: {size:,} bytes (one url_state kept)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
