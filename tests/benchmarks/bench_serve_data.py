"""The data layer of ``auditor serve`` on the 100,000-site history: the fleet table's
build (seconds, RSS), its queries, its refresh, and one site's detail.

Run by hand, never by pytest::

    python3 tests/benchmarks/bench_serve_data.py --keep /tmp/auditor-hf

Reads, read-only, the history that ``bench_history.py --fleet`` keeps in ``--keep DIR``
(``history.sqlite3``, and the PostgreSQL cluster in ``DIR/pg``: used as it runs when
another process started it, else started here and stopped at the end, never deleted;
its database ``fleet_SITES_RUNS_PAGES`` read as the role ``auditor``). Nothing is written
to either. For each backend:

- the table's build: seconds and the process's RSS before and after;
- each query of a spread (no filter, each filter, each sort both ways, deep pages, past
  the last page), ``--repeat`` times: p50 and p95 warm (the state's sort orders and host
  matches kept, as between two runs saved) and cold (both forgotten before each query,
  as on the first query after a refresh);
- the check for new runs when none came (each second: the highest run id; each minute:
  every run counted too), and a refresh that re-reads the sites of the latest
  ``--new-runs`` runs (the table told they are new), the sorts asked before made again;
- ``site_detail`` of ``--sites`` random sites (the plan of each made: first open), then
  again (the plan's counts kept): p50 and p95.

Milliseconds unless said.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.serve import fleetstate
from auditor.serve.fleet import SORTS, FleetQuery, FleetTable
from auditor.serve.readers import Readers
from auditor.serve.site import site_detail


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 1e6


def _pct(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


def _timed(repeat: int, run: Callable[[], Any], before: Callable[[], None]) -> list[float]:
    times = []
    for _ in range(repeat):
        before()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def _queries(table: FleetTable) -> dict[str, FleetQuery]:
    state = table._state
    newest = max(state.rows, key=lambda r: r.since).since
    last = table.query(FleetQuery()).pages
    queries = {
        "no filter": FleetQuery(),
        "verdict trusted": FleetQuery(verdicts=("trusted",)),
        "verdicts untrusted+no-lastmod": FleetQuery(verdicts=("untrusted", "no-lastmod")),
        "degraded": FleetQuery(degraded=True),
        "changed in the last 7 days": FleetQuery(changed_since=newest - timedelta(days=7)),
        "host 'site0123' (100 sites)": FleetQuery(host="site0123"),
        "host 'example' (every site)": FleetQuery(host="example"),
        "host 'nothing' (none)": FleetQuery(host="nothing"),
        "all filters, -since": FleetQuery(
            verdicts=("untrusted",),
            degraded=True,
            changed_since=newest - timedelta(days=30),
            host="site",
            sort="-since",
        ),
        f"deep: page {last} (last) x100": FleetQuery(page=last),
        f"deep: page {last // 5} x500, -due": FleetQuery(page=last // 5, per_page=500, sort="-due"),
        "past the last page": FleetQuery(page=last + 10),
    }
    for sort in SORTS:
        for name in (sort, f"-{sort}"):
            queries[f"sort {name}"] = FleetQuery(sort=name)
    return queries


def _fleet(table: FleetTable, repeat: int) -> None:
    state = table._state

    def forget() -> None:
        state._orders.clear()
        state._hosts.clear()

    print(f"  {'query':38s} {'rows':>7s} {'warm p50':>9s} {'warm p95':>9s} {'cold p50':>9s} "
          f"{'cold p95':>9s}")  # fmt: skip
    for name, q in _queries(table).items():
        total = table.query(q).total
        warm = _timed(repeat, lambda q=q: table.query(q), lambda: None)  # type: ignore[misc]
        cold = _timed(repeat, lambda q=q: table.query(q), forget)  # type: ignore[misc]
        print(f"  {name:38s} {total:7d} {_pct(warm, .5):9.2f} {_pct(warm, .95):9.2f} "
              f"{_pct(cold, .5):9.2f} {_pct(cold, .95):9.2f}", flush=True)  # fmt: skip


def _refresh(readers: Readers, table: FleetTable, new_runs: int, repeat: int) -> None:
    history = readers.history()
    state = table._state
    for verify, label in ((False, "highest run id"), (True, "and every run counted")):
        check = _timed(
            repeat, lambda v=verify: fleetstate.refreshed(history, state, verify=v), lambda: None
        )
        print(f"  check, no new run ({label}): p50 {_pct(check, 0.5):.2f}  "
              f"p95 {_pct(check, 0.95):.2f}")  # fmt: skip
    top, count = state.marks
    state.marks = (top - new_runs, count - new_runs)  # told the latest runs are new
    try:
        made = _timed(5, lambda: fleetstate.refreshed(history, state), lambda: None)
    finally:
        state.marks = (top, count)
    print(f"  refresh, {new_runs} new runs: p50 {_pct(made, 0.5):.1f}  max {max(made) * 1000:.1f}")
    started = time.perf_counter()
    series = table.verdicts_over_time()
    print(f"  verdicts over time: {len(series)} days, {(time.perf_counter() - started) * 1000:.1f}")


def _sites(readers: Readers, table: FleetTable, count: int) -> None:
    slugs = random.Random(35).sample([r.slug for r in table._state.rows], count)
    for label in ("first open (plan made)", "again (plan kept)"):
        times = []
        for slug in slugs:
            started = time.perf_counter()
            assert site_detail(readers, table, slug) is not None
            times.append(time.perf_counter() - started)
        print(f"  site_detail, {count} sites, {label}: p50 {_pct(times, .5):.1f}  "
              f"p95 {_pct(times, .95):.1f}  max {max(times) * 1000:.1f}", flush=True)  # fmt: skip


def _measure(url: str, args: argparse.Namespace) -> None:
    readers = Readers(url)
    try:
        gc.collect()
        before, started = _rss_mb(), time.perf_counter()
        table = FleetTable(readers, background=False, check_seconds=3600)  # checked below
        built = time.perf_counter() - started
        gc.collect()
        print(f"  build: {built:.2f} s, {len(table):,} sites; RSS {before:.0f} -> "
              f"{_rss_mb():.0f} MB (+{_rss_mb() - before:.0f})", flush=True)  # fmt: skip
        _fleet(table, args.repeat)
        _refresh(readers, table, args.new_runs, args.repeat)
        _sites(readers, table, args.sites)
    finally:
        readers.close()


def _running_port(folder: Path) -> int | None:
    """The port of the cluster in ``folder`` when another process runs it."""
    pid = folder / "data" / "postmaster.pid"
    if not pid.exists():
        return None
    return int(pid.read_text().splitlines()[3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, default=Path("/tmp/auditor-hf"))
    parser.add_argument("--database", default="fleet_100000_10_2", help="PostgreSQL's")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--new-runs", type=int, default=200)
    args = parser.parse_args()
    for backend in args.backends.split(","):
        print(f"{backend}:", flush=True)
        if backend == "sqlite":
            _measure(str(args.keep / "history.sqlite3"), args)
            continue
        port, server = _running_port(args.keep / "pg"), None
        if port is None:
            from tests.benchmarks.bench_history import KeptServer

            server = KeptServer(args.keep / "pg")
            port = server.port
        try:
            _measure(f"postgresql://auditor@127.0.0.1:{port}/{args.database}", args)
        finally:
            if server is not None:
                server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
