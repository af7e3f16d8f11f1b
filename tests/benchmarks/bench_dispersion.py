"""Dispersion analysis cost against the walk it follows, on 1,000,000 URLs.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_dispersion.py

Generates the same 20 x 50,000-URL index as bench_walk.py (mixed lastmod forms, two children
stamped with a generation time), serves it on loopback from its own process, then in this
process, ``--repeat`` times: walks it into an inventory (``load_inventory``: the walk plus
the DataFrame), analyses it (``analyse``), and analyses it again against a previous walk
(the across-runs movement). Prints seconds, the ratio analysis/walk (target < 0.10) and
what the analyser found, as a sanity check.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_walk import generate, loopback_server

from auditor.dispersion import analyse, flag_codes
from auditor.walker.inventory import load_inventory


def _timed(function, *args):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=20)
    parser.add_argument("--per-child", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench_dispersion_"))
    try:
        root = workdir / "site"
        root.mkdir()
        with loopback_server(root) as origin:
            site = generate(root, origin, args.children, args.per_child)
            print(f"generated {site.urls:,} URLs in {site.children} children; serving {origin}")
            walks, plain, moved = [], [], []
            for i in range(args.repeat):
                inventory, walk_s = _timed(load_inventory, site.index_url)
                report, analyse_s = _timed(analyse, inventory)
                _, movement_s = _timed(analyse, inventory, inventory.entries)
                walks.append(walk_s)
                plain.append(analyse_s)
                moved.append(movement_s)
                print(
                    f"run {i + 1}: walk+frame {walk_s:.2f} s | analyse {analyse_s:.3f} s "
                    f"({analyse_s / walk_s:.3f}) | with previous {movement_s:.3f} s "
                    f"({movement_s / walk_s:.3f})"
                )
            best_walk, best_plain, best_moved = min(walks), min(plain), min(moved)
            print(
                f"\n{site.urls:,} URLs, best of {args.repeat}: walk+frame {best_walk:.2f} s, "
                f"analyse {best_plain:.3f} s, ratio {best_plain / best_walk:.3f} "
                f"(target < 0.10); with a previous walk {best_moved:.3f} s, "
                f"ratio {best_moved / best_walk:.3f}"
            )
            flagged = {s.sitemap.rsplit("/", 1)[1]: flag_codes(s.flags) for s in report.segments}
            print("site flags:", flag_codes(report.flags))
            print("flagged sub-sitemaps:", {k: v for k, v in flagged.items() if v})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
