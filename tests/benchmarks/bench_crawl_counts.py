"""Reading the crawl log's counts at 1,000,000 lines: per file, and URL by URL for the
files split into groups (auditor.history.crawlcounts). Time and peak memory.

Run by hand, never by pytest:
    python3 tests/benchmarks/bench_crawl_counts.py [--lines N] [--root CHECKOUT]

One SQLite history in a temp dir holds one site and a crawl log of ``--lines`` fetches:
two of each of ``lines / 2`` URLs over 20 sub-sitemaps (the second fetch compared with the
first, one URL in ten changed, one in seven with its lastmod advanced; a credible
dateModified checked on one fetch in four). Each file lists posts (their own dates, 80%)
and tag pages (one build moment, 20%), so the group finder splits it in two. Each stage
runs in a process of its own (its peak RSS its own), best of ``--repeat``:

- ``whole``: ``History.crawl_counts(site, since)``, every file counted whole: the read of
  an audit or a plan on a site none of whose files is split (and the only read before
  groups had crawl counts: run it with ``--root`` on the baseline checkout);
- ``split-1``: ``crawl_log_counts(by_url=[one file])`` then ``attributed`` by a Segmenter
  that splits that file: one file of 20 read URL by URL;
- ``split-all``: every file split: every URL read by itself (the worst case).

Peak RSS is the process's: the segmenter's learning (as an audit's analysis learns it)
comes before the read and is shown apart (``RSS before``).

The history is written by this checkout; ``--root`` reads it with another checkout's
``auditor`` (the same schema), stages it lacks skipped. Prints seconds (read, then
attribution to groups), peak RSS and the compared fetches counted (the same in every
stage: a check).
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SITE = "https://www.example.com"
FILES = 20
DAY1 = datetime(2026, 11, 1, tzinfo=UTC)
BUILD = int(datetime(2026, 10, 1, tzinfo=UTC).timestamp())


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _file(f: int) -> str:
    return f"{SITE}/sitemap-{f}.xml"


def _tag(i: int) -> bool:
    """URL ``i`` is a tag page: one in five of each file (URL ``i`` is in file ``i % 20``)."""
    return (i // FILES) % 5 == 4


def _loc(i: int) -> str:
    """URL ``i``: a tag page or a post."""
    if _tag(i):
        return f"{SITE}/tags/tag-{i}-of-the-site.html"
    return f"{SITE}/posts/{i:07d}-a-title-of-some-length.html"


def _setup(db: str, lines: int) -> dict[str, float]:
    from auditor.history import History
    from auditor.history.crawl import CrawlLogRow
    from tests.history.helpers import save

    started = time.perf_counter()
    urls = lines // 2
    with History.open(db) as history:
        save(history, SITE)
        site_id = history.site_id(SITE)
        assert site_id is not None
        for start in range(0, urls, 50_000):
            rows = []
            for i in range(start, min(start + 50_000, urls)):
                loc, sitemap, dated = _loc(i), _file(i % FILES), i % 2 == 0
                rows.append(CrawlLogRow(loc, sitemap, DAY1, 200, "a", None, None, None, None,
                                        True if dated else None))  # fmt: skip
                rows.append(CrawlLogRow(loc, sitemap, DAY1 + timedelta(days=3), 200, "b", None,
                                        i % 10 == 0, i % 7 == 0, 3.0, None))  # fmt: skip
            history.save_fetches(site_id, [], rows, DAY1 + timedelta(days=4))
    return {"seconds": time.perf_counter() - started}


def _segmenter(split: int, urls: int) -> Any:
    """A Segmenter that splits the first ``split`` files as an audit would learn them."""
    import numpy as np

    from auditor.dispersion.groups import find_groups
    from auditor.dispersion.segments import Segmenter

    found = {}
    for f in range(split):
        rows = range(f, urls, FILES)
        locs = [_loc(i) for i in rows]
        seconds = [BUILD if _tag(i) else BUILD - 86_400 * (1 + i % 997) for i in rows]
        grouping = find_groups(locs, np.array(seconds, dtype=np.int64), np.ones(len(locs), bool))
        assert len(grouping.groups) == 2, grouping.groups
        found[_file(f)] = grouping
    return Segmenter(found)


def _stage(name: str, db: str, lines: int) -> dict[str, Any]:
    from auditor.history import History

    split = {"whole": 0, "split-1": 1, "split-all": FILES}[name]
    segmenter = _segmenter(split, lines // 2) if split else None
    since = DAY1 - timedelta(days=1)
    before = _rss_mb()  # the segmenter learned (as an audit's analysis does) and imports
    with History.open(db) as history:
        started = time.perf_counter()
        if segmenter is None:
            counts = history.crawl_counts(SITE, since)
            read = time.perf_counter() - started
            keyed, rows = counts, 0
        else:
            found = history.crawl_log_counts(SITE, since, by_url=segmenter.groupings)
            read = time.perf_counter() - started
            keyed, rows = found.attributed(segmenter).keyed, len(found.locs)
        attribution = time.perf_counter() - started - read
    peak = _rss_mb()
    compared = sum(c.compared for c in keyed.values())
    dated = sum(c.dated for c in keyed.values())
    return {"read": read, "attribution": attribution, "before_mb": before, "peak_mb": peak,
            "rows": rows,
            "keys": len(keyed), "compared": compared, "dated": dated}  # fmt: skip


def _run(root: Path, *args: str) -> dict[str, Any] | None:
    """This script's stage in a fresh process importing ``root``'s auditor; None when that
    checkout lacks what the stage calls."""
    command = [sys.executable, __file__, "--root", str(root), *args]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        if "AttributeError" in done.stderr:
            return None
        raise SystemExit(done.stderr)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    """Write the history once, then time each stage in its own processes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to read with")
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))  # tests.history.helpers, from this checkout
    sys.path.insert(0, str(args.root.resolve()))  # auditor, from the one read with
    if args.stage:
        if args.stage == "setup":
            print(json.dumps(_setup(args.db, args.lines)))
        else:
            print(json.dumps(_stage(args.stage, args.db, args.lines)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-crawl-counts-") as folder:
        db = str(Path(folder) / "history.sqlite3")
        made = _run(ROOT, "--stage", "setup", "--db", db, "--lines", str(args.lines))
        assert made is not None
        print(f"{args.lines:,} log lines written in {made['seconds']:.0f} s; read with {args.root}")
        print("| stage | URL rows | keys | compared | dated | read s | attribution s "
              "| RSS before MB | peak RSS MB |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|")
        for name in ("whole", "split-1", "split-all"):
            runs = [_run(args.root, "--stage", name, "--db", db, "--lines", str(args.lines))
                    for _ in range(args.repeat)]  # fmt: skip
            if runs[0] is None:
                print(f"| {name} | (not in this checkout) | | | | | | | |")
                continue
            best = min((r for r in runs if r), key=lambda r: r["read"] + r["attribution"])
            print(f"| {name} | {best['rows']:,} | {best['keys']} | {best['compared']:,} "
                  f"| {best['dated']:,} | {best['read']:.2f} | {best['attribution']:.2f} "
                  f"| {best['before_mb']:.0f} | {best['peak_mb']:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
