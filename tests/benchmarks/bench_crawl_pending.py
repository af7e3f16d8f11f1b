"""Fetches pending a walk, resolved at 1,000,000: time and peak memory of each step.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_crawl_pending.py [--urls N]

The history of ``bench_plan_scale.py`` (one run of a site of ``--urls`` URLs), then its
``crawled-1`` and ``crawled-2``: a fetch of every URL a day after the run, again a day
later (one in ten changed): every second fetch is compared, and pending, the run's walk
being older than it. Each step runs in a process of its own, so its peak RSS is its own:

- ``previous``: what an audit reads before it walks (``previous_of``: the crawl counts
  and the pending fetches of the window);
- ``worker``: what its worker does with them once it has walked (``resolve`` against
  the walk's entries, the counts since the run and before it, attributed);
- ``save``: what saving its run keeps (``resolve_walk``: the pending fetches read again,
  resolved, written back).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_plan_scale import NOW, SITE, _stage  # noqa: E402

WALKED = NOW + timedelta(days=3)  # a walk after every fetch


def _step(name: str, db: str, urls: int) -> dict[str, float]:
    from auditor.audit import _crawl_counts, previous_of
    from auditor.crawl.resolve import resolve_walk
    from auditor.dispersion.segments import Segmenter
    from auditor.history import History

    if name in ("setup", "crawled-1", "crawled-2"):
        return _stage(name, db, urls)
    started = time.perf_counter()
    count = 0
    with History.open(db) as history:
        entries = history.latest_entries(SITE)
        assert entries is not None
        started = time.perf_counter()  # the inventory is the walk's: not this step's
        if name == "previous":
            previous = previous_of(history, SITE)
            count = len(previous.pending) if previous.pending is not None else 0
        elif name == "worker":
            previous = previous_of(history, SITE)
            started = time.perf_counter()
            crawled, _ = _crawl_counts(previous, entries, WALKED)
            assert crawled is not None
            keyed = crawled.attributed(Segmenter()).keyed
            count = sum(c.compared for c in keyed.values())
        elif name == "save":
            count = resolve_walk(history, SITE, WALKED, entries)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mb": peak, "count": count}


def _run(name: str, db: str, urls: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--step", name, "--db", db, "--urls", str(urls)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out.splitlines()[-1]))


def main() -> None:
    """Run every step in its own process and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(_step(args.step, args.db, args.urls)))
        return
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "history.sqlite3")
        for name in ("setup", "crawled-1", "crawled-2"):
            _run(name, db, args.urls)
        print(f"{args.urls:,} URLs, every one fetched twice; each step in its own process")
        print(f"{'step':<12}{'count':>12}{'seconds':>10}{'peak MB':>10}")
        for name in ("previous", "worker", "save"):
            got = _run(name, db, args.urls)
            print(
                f"{name:<12}{int(got['count']):>12,}{got['seconds']:>10.1f}{got['peak_mb']:>10.0f}"
            )


if __name__ == "__main__":
    main()
