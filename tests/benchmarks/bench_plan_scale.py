"""A plan and a crawl log over a 1,000,000-URL site: time and peak memory, as ratios.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_plan_scale.py [--urls N]

One SQLite history in a temp dir holds one run of a site of ``--urls`` URLs (20
sub-sitemaps, the inventory of ``bench_history.py``). Each stage runs in a process of
its own, so its peak RSS is its own:

- ``load``: the baseline, reading the site's inventory back (``latest_entries``), which
  every plan must do;
- ``crawled-1`` and ``crawled-2``: ``record_fetches`` of a fetch of every URL (status
  200, a content hash), the second a day later with one URL in ten changed;
- ``plan``: ``auditor.plan(walk=False)`` at a budget of 50,000, consumed as a crawler
  would (each fetch handed on, none kept).

Prints seconds and peak RSS per stage, and each stage's against the baseline's.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SITE = "https://www.example.com"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _stage(name: str, db: str, urls: int) -> dict[str, float]:
    from auditor.crawl.record import record_fetches
    from auditor.crawl.records import FetchRecord
    from auditor.history import History
    from auditor.planner import plan
    from tests.history.helpers import files, large_inventory, result

    started = time.perf_counter()
    count = 0
    with History.open(db) as history:
        if name == "setup":
            frame = large_inventory(urls)
            history.save_run(result(SITE, started=NOW), files=files(SITE), entries=frame, pages=[])
        elif name == "load":
            entries = history.latest_entries(SITE)
            count = 0 if entries is None else len(entries)
        elif name.startswith("crawled"):
            day = int(name[-1])
            locs = history.latest_entries(SITE)["loc"]  # type: ignore[index]
            at = NOW + timedelta(days=day)

            def records():  # type: ignore[no-untyped-def]
                for i, loc in enumerate(locs):
                    changed = day > 1 and i % 10 == 0
                    yield FetchRecord(str(loc), at, 200, content_hash=f"v{int(changed)}")

            count = record_fetches(history, records(), now=at).recorded
        elif name == "plan":
            for _fetch in plan(history, now=NOW + timedelta(days=3), budget=50_000, walk=False):
                count += 1
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mb": peak, "count": count}


def _run(name: str, db: str, urls: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--stage", name, "--db", db, "--urls", str(urls)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.splitlines()[-1]))


def main() -> None:
    """Run every stage in its own process and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        print(json.dumps(_stage(args.stage, args.db, args.urls)))
        return
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "history.sqlite3")
        _run("setup", db, args.urls)
        base = _run("load", db, args.urls)
        print(f"{args.urls:,} URLs; each stage in its own process")
        print(f"{'stage':<12}{'count':>12}{'seconds':>10}{'x load':>8}{'peak MB':>10}{'x load':>8}")
        for name in ("load", "crawled-1", "crawled-2", "plan"):
            got = base if name == "load" else _run(name, db, args.urls)
            print(
                f"{name:<12}{int(got['count']):>12,}{got['seconds']:>10.1f}"
                f"{got['seconds'] / base['seconds']:>8.1f}{got['peak_mb']:>10.0f}"
                f"{got['peak_mb'] / base['peak_mb']:>8.2f}"
            )


if __name__ == "__main__":
    main()
