"""Group finding cost on one 1,000,000-URL sub-sitemap, against a baseline pass over its locs.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_groups.py [--urls N] [--repeat R]

Builds a Hexo-like mix (55% date-path posts with spread lastmods, 20% tag pages,
5% categories, 5% pagination, 5% under a docs section, 10% one-off pages; the list
pages carry one build date), then, ``--repeat`` times, times the baseline
``pd.Series(locs).str.len()`` (one pass over the Python strings), ``find_groups`` with a
previous walk, and ``Grouping.labels`` over the same locs. Prints the best seconds of
each, the ratio to the baseline, peak memory of one more call (Python allocations by
tracemalloc plus pyarrow's pool high-water mark, above what the input already holds;
the pool's mark is the process's, so it can only overstate) and the groups found, as a
sanity check.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.dispersion.groups import find_groups

BUILD = 1_735_689_600  # 2025-01-01


def realistic(urls: int, seed: int = 7) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Locs and lastmod seconds of a blog-like sub-sitemap, and the previous walk's."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(6, size=urls, p=[0.55, 0.20, 0.05, 0.05, 0.05, 0.10])
    forms = (
        "https://blog.example.org/{y}/{m:02d}/{d:02d}/post-{i}/",
        "https://blog.example.org/tags/tag-{i}/",
        "https://blog.example.org/categories/cat-{i}/",
        "https://blog.example.org/tags/tag-{j}/page/{p}/",
        "https://blog.example.org/docs/section-{j}/page-{i}.html",
        "https://blog.example.org/page-{i}/",
    )
    years, months, days = (
        rng.integers(2010, 2025, urls),
        rng.integers(1, 13, urls),
        rng.integers(1, 29, urls),
    )
    locs = [
        forms[k].format(y=y, m=m, d=d, i=i, j=i % 997, p=i % 9 + 2)
        for i, (k, y, m, d) in enumerate(
            zip(kind.tolist(), years.tolist(), months.tolist(), days.tolist(), strict=True)
        )
    ]
    spread = rng.integers(BUILD - 400 * 86_400 * 10, BUILD, urls)
    listing = np.isin(kind, (1, 2, 3))
    seconds = np.where(listing, BUILD, spread).astype(np.int64)
    previous = np.where(listing, BUILD - 7 * 86_400, spread).astype(np.int64)
    return locs, seconds, previous


def _measured(function: Callable[[], object], repeat: int) -> tuple[object, float, float]:
    """The result, best seconds of ``repeat`` calls, and the peak MB above the start of
    one more call under tracemalloc (kept out of the timed calls, which it slows)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    pool = pa.default_memory_pool()
    pool.release_unused()
    arrow_before = pool.bytes_allocated()
    tracemalloc.start()
    result = function()
    python_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    arrow_peak = max(pool.max_memory() - arrow_before, 0)
    return result, best, (python_peak + arrow_peak) / 1e6


def _line(name: str, seconds: float, mb: float, baseline: float | None = None) -> str:
    ratio = f"  ratio {seconds / baseline:4.2f}" if baseline else ""
    return f"  {name:36} {seconds:6.3f} s  {mb:7.1f} MB{ratio}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    locs, seconds, previous = realistic(args.urls)
    dated = np.ones(len(locs), dtype=bool)
    _, base_s, base_mb = _measured(lambda: pd.Series(locs).str.len(), args.repeat)
    grouping, find_s, find_mb = _measured(
        lambda: find_groups(locs, seconds, dated, previous, dated), args.repeat
    )
    labels, label_s, label_mb = _measured(lambda: grouping.labels(locs), args.repeat)  # type: ignore[attr-defined]
    print(f"{len(locs):,} URLs, best of {args.repeat}")
    print(_line("baseline pd.Series(locs).str.len()", base_s, base_mb))
    print(_line("find_groups (with previous)", find_s, find_mb, base_s))
    print(_line("Grouping.labels", label_s, label_mb, base_s))
    for group in grouping.groups:  # type: ignore[attr-defined]
        print(f"    {group.pattern:40} {group.urls:9,} {group.basis}")
    assert len(labels) == len(locs)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
