"""A small site's pandas stages, one at a time: CPU a site of each, on demo sites' audits.

Run by hand, never by pytest:

    python3 tests/benchmarks/bench_small_frames.py --sites 24 --rounds 5

Demo sites (``bench_fleet``'s light servers, 60 pages each, served by a child process)
are audited once each as a fleet's first audit (``--sample 20 --full-sample``, ``--delay
0``); then each stage runs on every site's entries or bundle again and again, and the
median CPU (``time.process_time``) a site of each is printed: the inventory frame from
its entries (:func:`~auditor.walker.inventory.entries_to_dataframe`), the dispersion
analysis and the score's inputs (``audit._score_inputs``), the sample (a
:class:`~auditor.sampler.choose.SequentialPlan` spent and a
:func:`~auditor.sampler.choose.choose_sample`), the url_state blob
(:func:`~auditor.history.encode_state`) and the command's save
(:func:`~auditor.audit.save_audit` to SQLite, a fresh history each round). To compare
two commits, run this file from each tree (it imports the ``auditor`` beside it).

Touches: the network (loopback), the disk.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_fleet import _raise_file_limit, _servers  # noqa: E402


def _audits(count: int) -> list[tuple[str, Any]]:
    """Each demo site's origin and its first audit's bundle."""
    from auditor.audit import AuditOptions, Previous, run_audit
    from auditor.http import PAGE_ACCEPT, HttpOptions
    from auditor.sampler import SampleOptions

    page_http = HttpOptions(retries=0, accept=PAGE_ACCEPT)
    options = AuditOptions(
        sample=SampleOptions(sample=20, delay=0.0, sequential=False, http=page_http)
    )
    with _servers("light", count) as (origins, _logs):
        return [(origin, run_audit(origin, Previous(), options)) for origin in origins]


def _entries(frame: Any) -> list[Any]:
    """The frame's rows back as the walker's entries."""
    from auditor.models import SitemapEntry

    columns = zip(
        frame["loc"],
        frame["lastmod"].astype(object),
        frame["lastmod_precision"].astype(object),
        frame["lastmod_raw"],
        frame["sitemap"].astype(str),
        strict=True,
    )
    return [
        SitemapEntry(
            loc,
            None if lastmod is None or lastmod != lastmod else lastmod.to_pydatetime(),
            precision if isinstance(precision, str) else None,
            raw if isinstance(raw, str) else None,
            sitemap,
        )
        for loc, lastmod, precision, raw, sitemap in columns
    ]


def _stages(audits: list[tuple[str, Any]]) -> dict[str, Callable[[], None]]:
    from auditor.audit import Previous, _score_inputs, save_audit
    from auditor.history import History, encode_state
    from auditor.sampler.choose import SequentialPlan, choose_sample
    from auditor.walker.inventory import Inventory, entries_to_dataframe

    sites = [(o, b, Inventory(o, b.entries, b.files, ()), _entries(b.entries)) for o, b in audits]

    def frame() -> None:
        for _, _, _, entries in sites:
            entries_to_dataframe(entries)

    def inputs() -> None:
        for origin, bundle, inventory, _ in sites:
            _score_inputs(Previous(), origin, bundle.result.started_at, inventory)

    def sample() -> None:
        for _, _, inventory, _ in sites:
            plan = SequentialPlan(inventory.entries, 20, seed=1)
            while (page := plan.next_page({})) is not None:
                plan.record(page, requested=True)
            choose_sample(inventory.entries, 20, seed=1)

    def state() -> None:
        for _, bundle, _, _ in sites:
            encode_state(bundle.entries)

    def save() -> None:
        with tempfile.TemporaryDirectory() as folder:
            history = History.open(Path(folder) / "history.sqlite3")
            for _, bundle, _, _ in sites:
                save_audit(history, bundle)
            history.close()

    return {
        "inventory frame": frame,
        "analyse, score inputs": inputs,
        "sample (plan, choose)": sample,
        "url_state blob": state,
        "save_audit (SQLite)": save,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    _raise_file_limit()
    stages = _stages(_audits(args.sites))
    for run in stages.values():
        run()  # warm: imports, caches
    spent: dict[str, list[float]] = {name: [] for name in stages}
    for _ in range(args.rounds):
        for name, run in stages.items():
            started = time.process_time()
            run()
            spent[name].append((time.process_time() - started) / args.sites * 1000)
    for name, each in spent.items():
        runs = ", ".join(f"{e:.2f}" for e in each)
        print(f"{name:24s} {statistics.median(each):7.3f} ms a site   ({runs})")


if __name__ == "__main__":
    main()
