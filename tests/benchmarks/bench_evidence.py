"""Time to read one page (parse, structured dates, fingerprint) over the fundus corpus.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_evidence.py [--repeat N] [--clock cpu]

Reads the 110 real news pages of the shared corpus's ``html/fundus`` (decompressed once, before
timing) and prints, per stage, the median, p99 and max milliseconds per page over every page
and repetition: the lxml parse (the floor: no reading of a page can be faster), structured
dates (JSON-LD, microdata, OpenGraph, meta), RDFa (the opt-in extra), the fingerprint (its
blocks included), the block cut alone, the whole ``read_page``; then the comparison across
runs, template learning included (:func:`auditor.evidence.compare_runs` of the 110 pages
against themselves, in groups of 50 as a sample would be: its time per page), and
``read_page`` plus that share: one page's evidence, all told.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.evidence.fingerprint import fingerprint_tree  # noqa: E402
from auditor.evidence.page import parse_html, read_page  # noqa: E402
from auditor.evidence.runs import Fetch, compare_runs  # noqa: E402
from auditor.evidence.segment import cut_blocks  # noqa: E402
from auditor.evidence.structured import read_structured  # noqa: E402
from auditor.evidence.text import content_root  # noqa: E402

#: The shared corpus beside the checkout, or beside a worktree's parent.
CORPUS = next(
    (p / "shared" / "corpus" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "corpus",
)


def _pages() -> list[tuple[str, bytes]]:
    with (CORPUS / "fundus_pages_gold.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [(r["url"], gzip.decompress((CORPUS / r["local_file"]).read_bytes())) for r in rows]


STAGES = ("parse", "structured", "rdfa", "fingerprint", "blocks", "read_page")
#: Pages compared across runs at once (a sample of 50, as ``auditor audit`` takes).
GROUP = 50


#: The clock stages are timed with: wall (perf_counter), or the CPU time of this thread
#: (thread_time: what the page costs, without the time other processes held the core).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
_clock = CLOCKS["wall"]


def _timed(fn: Callable[..., object], *args: object, **kwargs: object) -> float:
    started = _clock()
    fn(*args, **kwargs)
    return (_clock() - started) * 1000


def _one_page(url: str, html: bytes, now: datetime) -> dict[str, float]:
    tree = parse_html(html, "text/html")
    structured = _timed(read_structured, tree, urls=[url])
    return {
        "parse": _timed(parse_html, html, "text/html"),
        "structured": structured,
        "rdfa": _timed(read_structured, tree, urls=[url], html=html) - structured,
        "fingerprint": _timed(fingerprint_tree, tree),
        "blocks": _timed(lambda: cut_blocks(tree, content_root(tree))),
        "read_page": _timed(read_page, html, url=url, headers={}, status=200, fetched_at=now),
    }


def _comparison_per_page(pages: list[tuple[str, bytes]], now: datetime) -> list[float]:
    """Milliseconds per page of comparing runs (template learning included), per group."""
    fetches = []
    for url, html in pages:
        fp = read_page(html, url=url, headers={}, status=200, fetched_at=now).fingerprint
        assert fp is not None
        fetches.append(Fetch(url, url.split("/")[2], fp.exact, fp.simhash, fp.blocks))
    per_page = []
    for start in range(0, len(fetches), GROUP):
        group = fetches[start : start + GROUP]
        per_page.append(_timed(compare_runs, group, group) / len(group))
    return per_page


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall",
        help="wall time, or this thread's CPU time (fairer on a loaded machine)",
    )  # fmt: skip
    args = parser.parse_args()
    global _clock
    _clock = CLOCKS[args.clock]
    if not CORPUS.is_dir():
        print(f"corpus not present at {CORPUS}", file=sys.stderr)
        return 1
    pages = _pages()
    now = datetime.now(UTC)
    stages: dict[str, list[float]] = {name: [] for name in STAGES}
    comparison: list[float] = []
    for _ in range(args.repeat):
        for url, html in pages:
            for name, ms in _one_page(url, html, now).items():
                stages[name].append(ms)
        comparison += _comparison_per_page(pages, now)
    share = statistics.fmean(comparison)
    stages["across runs"] = comparison
    stages["all told"] = [ms + share for ms in stages["read_page"]]
    print(f"{len(pages)} pages x {args.repeat}, ms per page ({args.clock} clock)")
    for name, values in stages.items():
        values.sort()
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        median = statistics.median(values)
        print(f"  {name:<12} median {median:6.1f}  p99 {p99:6.1f}  max {values[-1]:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
