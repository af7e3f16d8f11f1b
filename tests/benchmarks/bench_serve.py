"""``auditor serve`` on a 100,000-site history, over HTTP on loopback: the fleet page's
latency and the trust look-up's latency and throughput with concurrent clients.

Run by hand, never by pytest::

    python3 tests/benchmarks/bench_serve.py [--keep /tmp/auditor-hf] [--backends sqlite,postgresql]

Reads the history the history benchmark keeps (``bench_history.py --fleet --keep DIR``: a
SQLite file and a PostgreSQL cluster in DIR; 100,000 sites of 2 pages, 3 runs each),
never writes to it. For each backend it starts ``auditor serve --port 0`` in a process,
waits until it answers, then:

- **fleet page**: ``GET /`` with a spread of filters, sorts and pages (the first page,
  deep pages, each filter, each sort both ways), ``--fleet-requests`` of them one at a time
  from one client: p50, p95, max;
- **trust look-up**: ``GET /api/v1/trust?url=`` of listed URLs of random sites from
  ``--clients`` concurrent clients (threads, one keep-alive connection each) for
  ``--seconds``: p50, p95, look-ups a second; a first pass on cold sites, a second on the
  same URLs (warm);
- the server's resident memory after each (``/proc/PID/status`` VmRSS) and at start.

Targets (issue 35): fleet page p95 <= 300 ms; trust p95 <= 20 ms and >= 500 look-ups a
second with 16 clients; memory bounded. No assertion: the machine is shared, quote the load
(``uptime``) beside the numbers.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: The fleet page's addresses measured, in turn: what a person clicks through.
FLEET_QUERIES = (
    "/",
    "/?page=2",
    "/?page=500",
    "/?page=1000",
    "/?verdict=untrusted",
    "/?verdict=trusted&verdict=partial",
    "/?degraded=1",
    "/?changed_since=2026-01-01",
    "/?host=site-0042",
    "/?sort=site",
    "/?sort=-site&page=300",
    "/?sort=since",
    "/?sort=-last_run",
    "/?sort=due&per_page=500",
    "/?sort=-saved",
    "/?sort=runs&verdict=inconclusive",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=Path("/tmp/auditor-hf"))
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--fleet-requests", type=int, default=160)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--urls", type=int, default=20_000, help="distinct URLs looked up")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)
    urls = _listed_urls(args.keep / "history.sqlite3", args.urls)
    for backend in args.backends.split(","):
        with _database(backend, args.keep) as db:
            _bench(backend, db, urls, args)
    return 0


def _bench(backend: str, db: str, urls: list[str], args: argparse.Namespace) -> None:
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "auditor", "serve", "--db", db, "--port", "0", "-q",
         "--reports", "/tmp/auditor-bench-serve-reports"],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert child.stderr is not None
        line = child.stderr.readline()
        found = re.search(r"at (http://[^\s;]+?)/?[;\s]", line + " ")
        if found is None:
            raise SystemExit(f"{backend}: auditor serve did not start: {line}")
        base = found.group(1).rstrip("/")
        with httpx.Client(base_url=base, timeout=120) as client:
            client.get("/healthz")
        print(f"\n{backend}: ready in {time.perf_counter() - started:.1f} s, "
              f"RSS {_rss(child.pid):.0f} MB", flush=True)  # fmt: skip
        _fleet(base, args.fleet_requests)
        print(f"  RSS after the fleet pages: {_rss(child.pid):.0f} MB", flush=True)
        for label in ("cold", "warm"):
            _trust(base, urls, args.clients, args.seconds, label)
            print(f"  RSS after trust ({label}): {_rss(child.pid):.0f} MB", flush=True)
    finally:
        child.send_signal(2)
        child.wait(timeout=60)


def _fleet(base: str, requests: int) -> None:
    took: list[float] = []
    with httpx.Client(base_url=base, timeout=120) as client:
        for number in range(requests):
            path = FLEET_QUERIES[number % len(FLEET_QUERIES)]
            start = time.perf_counter()
            answer = client.get(path)
            took.append(time.perf_counter() - start)
            if answer.status_code != 200:
                raise SystemExit(f"GET {path}: {answer.status_code} {answer.text[:200]}")
    print(f"  fleet page: {requests} requests, p50 {_ms(took, 50)}, p95 {_ms(took, 95)}, "
          f"max {max(took) * 1000:.0f} ms", flush=True)  # fmt: skip


def _trust(base: str, urls: list[str], clients: int, seconds: float, label: str) -> None:
    took: list[list[float]] = [[] for _ in range(clients)]
    failures: list[str] = []
    stop = time.perf_counter() + seconds

    def run(number: int) -> None:
        picks = random.Random(number)
        with httpx.Client(base_url=base, timeout=60) as client:
            while time.perf_counter() < stop:
                url = picks.choice(urls)
                start = time.perf_counter()
                answer = client.get("/api/v1/trust", params={"url": url})
                took[number].append(time.perf_counter() - start)
                if answer.status_code != 200 or not answer.json().get("listed"):
                    failures.append(f"{answer.status_code} {url}")

    threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    every = [t for mine in took for t in mine]
    print(f"  trust ({label}, {clients} clients): {len(every):,} look-ups, "
          f"{len(every) / elapsed:,.0f}/s, p50 {_ms(every, 50)}, p95 {_ms(every, 95)}, "
          f"max {max(every) * 1000:.0f} ms; not listed or failed: {len(failures)}",
          flush=True)  # fmt: skip
    if failures:
        print("   e.g.", failures[:3])


def _ms(values: list[float], percent: int) -> str:
    cut = statistics.quantiles(values, n=100)[percent - 1] if len(values) > 1 else values[0]
    return f"{cut * 1000:.1f} ms"


def _rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _listed_urls(database: Path, count: int) -> list[str]:
    """``count`` URLs listed in the latest inventories of random sites (read from the
    SQLite history, which the PostgreSQL one copies)."""
    from auditor.history.state import decode_state

    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        (sites,) = conn.execute("SELECT max(site_id) FROM url_state").fetchone()
        picked: list[str] = []
        chooser = random.Random(7)
        while len(picked) < count:
            ids = [chooser.randint(1, sites) for _ in range(500)]
            marks = ",".join("?" * len(ids))
            rows = conn.execute(f"SELECT data FROM url_state WHERE site_id IN ({marks})", ids)
            for (blob,) in rows:
                picked.extend(str(loc) for loc in decode_state(blob)["loc"])
        return picked[:count]
    finally:
        conn.close()


class _database:
    """The history's location on ``backend``, its PostgreSQL cluster started if needed."""

    def __init__(self, backend: str, keep: Path) -> None:
        self.backend, self.keep, self.server = backend, keep, None

    def __enter__(self) -> str:
        if self.backend == "sqlite":
            return str(self.keep / "history.sqlite3")
        from tests.benchmarks.bench_history import KeptServer

        self.server = KeptServer(self.keep / "pg")
        return self.server.url("fleet_100000_3_2", "auditor")

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
