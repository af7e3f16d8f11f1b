"""Trust look-up (``auditor serve``, issue 35): look-ups in process from 16 threads on a
100,000-site history, never written to.

Run by hand, never by pytest::

    python3 tests/benchmarks/bench_trust.py                      # /tmp/auditor-hf, both backends
    python3 tests/benchmarks/bench_trust.py --backends sqlite --fleet-sites 2000

The history is ``bench_history.py --fleet``'s (``--dir``: its SQLite file and its
PostgreSQL cluster, started with ``KeptServer``, stopped after), read through the
server's own :class:`~auditor.serve.readers.Readers` (``History.open(read_only=True)``:
SQLite ``mode=ro``, a read-only PostgreSQL session): a write would fail, none is made.

URLs are listed URLs of random sites: each picked site's inventory read once before
timing (its locs put on the site's origin: the synthetic history's inventories name a
placeholder host, and within a site a URL is told by its path and query,
:mod:`auditor.serve.trustkeys`). Three phases on each backend, each look-up timed in its
thread (p50, p95, p99, look-ups a second over the phase's wall time):

- ``cold``: one look-up for each of ``--cold-sites`` sites, none kept yet (each reads
  its site: version, run, inventory, the two views' rows);
- ``warm``: ``--warm`` look-ups over random URLs of those same sites, all kept;
- ``fleet``: ``--fleet`` look-ups over random URLs of ``--fleet-sites`` random sites on a
  new index (the steady state of a crawler asking about a fleet larger than the cache:
  cold until kept, evicted beyond ``--max-cached-urls``).

RSS is this process's resident size before and after each phase (``VmRSS``).
Targets (issue 35): p95 <= 20 ms and >= 500 look-ups a second with 16 concurrent clients
over HTTP, so in process a kept site's look-up must cost well under a millisecond.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.history.state import state_columns
from auditor.serve.readers import Readers
from auditor.serve.trust import TrustIndex
from auditor.serve.trustkeys import local_key


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _urls(readers: Readers, sites: Sequence[tuple[int, str]]) -> dict[str, list[str]]:
    """Each site's listed URLs, on its own origin."""
    db = readers.history()._db
    found = {}
    for site_id, origin in sites:
        rows = db.rows("SELECT data FROM url_state WHERE site_id = ?", (site_id,))
        if rows:
            locs = state_columns(bytes(rows[0][0])).locs
            found[origin] = [origin + local_key(loc) for loc in locs]
    return found


def _timed(index: TrustIndex, urls: Sequence[str], threads: int) -> tuple[np.ndarray, float]:
    """Each look-up's seconds, ``threads`` threads sharing ``urls``; and the wall time."""
    spans: list[list[float]] = [[] for _ in range(threads)]
    failed: list[BaseException] = []

    def work(k: int) -> None:
        mine = spans[k]
        try:
            for url in urls[k::threads]:
                started = time.perf_counter()
                index.look_up(url)
                mine.append(time.perf_counter() - started)
        except BaseException as exc:  # reported after the join
            failed.append(exc)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - started
    if failed:
        raise failed[0]
    return np.array([s for mine in spans for s in mine]), wall


def _row(backend: str, phase: str, spans: np.ndarray, wall: float, rss: tuple[float, float],
         index: TrustIndex) -> None:  # fmt: skip
    p50, p95, p99 = (float(np.percentile(spans, q)) * 1000 for q in (50, 95, 99))
    print(f"{backend:10s} {phase:6s} {len(spans):>7,} {p50:>8.3f} {p95:>8.3f} {p99:>8.3f}"
          f" {len(spans) / wall:>9,.0f} {rss[0]:>8.0f} {rss[1]:>8.0f}"
          f" {index.cached_urls:>10,}", flush=True)  # fmt: skip


def bench(backend: str, location: str, args: argparse.Namespace) -> None:
    """The three phases on one backend."""
    rng = random.Random(args.seed)
    readers = Readers(location)
    try:
        every = [
            (int(i), str(o)) for i, o in readers.history()._db.rows("SELECT id, origin FROM sites")
        ]
        picked = rng.sample(every, args.cold_sites + args.fleet_sites)
        cold_sites = _urls(readers, picked[: args.cold_sites])
        fleet_sites = _urls(readers, picked[args.cold_sites :])
        index = TrustIndex(readers, max_cached_urls=args.max_cached_urls)  # type: ignore[arg-type]
        cold = [rng.choice(urls) for urls in cold_sites.values()]
        before = _rss_mb()
        spans, wall = _timed(index, cold, args.threads)
        _row(backend, "cold", spans, wall, (before, _rss_mb()), index)
        pool = list(cold_sites.values())
        warm = [rng.choice(rng.choice(pool)) for _ in range(args.warm)]
        before = _rss_mb()
        spans, wall = _timed(index, warm, args.threads)
        _row(backend, "warm", spans, wall, (before, _rss_mb()), index)
        index = TrustIndex(readers, max_cached_urls=args.max_cached_urls)  # type: ignore[arg-type]
        pool = list(fleet_sites.values())
        fleet = [rng.choice(rng.choice(pool)) for _ in range(args.fleet)]
        before = _rss_mb()
        spans, wall = _timed(index, fleet, args.threads)
        _row(backend, "fleet", spans, wall, (before, _rss_mb()), index)
    finally:
        readers.close()


@contextmanager
def _locations(args: argparse.Namespace) -> Iterator[dict[str, str]]:
    found = {}
    backends = args.backends.split(",")
    if "sqlite" in backends:
        found["sqlite"] = str(args.dir / "history.sqlite3")
    server = None
    if "postgresql" in backends:
        import psycopg

        from tests.benchmarks.bench_history import KeptServer

        server = KeptServer(args.dir / "pg")
        with psycopg.connect(server.url(), autocommit=True) as conn:
            sql = "SELECT datname FROM pg_database WHERE datname LIKE 'fleet_100000_%'"
            names = [row[0] for row in conn.execute(sql)]
        found["postgresql"] = server.url(sorted(names)[0], "auditor")
    try:
        yield found
    finally:
        if server is not None:
            server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the phases on each backend; print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/auditor-hf"))
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--cold-sites", type=int, default=1_600)
    parser.add_argument("--warm", type=int, default=32_000)
    parser.add_argument("--fleet", type=int, default=24_000)
    parser.add_argument("--fleet-sites", type=int, default=6_000)
    parser.add_argument("--max-cached-urls", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args(argv)
    heads = ("p50 ms", "p95 ms", "p99 ms", "a second", "RSS MB", "after", "cached")
    print(f"{'backend':10s} {'phase':6s} {'look-ups':>7s} " + " ".join(f"{h:>8s}" for h in heads))
    with _locations(args) as locations:
        for backend, location in locations.items():
            bench(backend, location, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
