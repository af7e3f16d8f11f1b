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
- **trust look-up**: ``GET /api/v1/trust?url=`` of listed URLs from ``--clients``
  concurrent clients (threads, one keep-alive connection each) for ``--seconds`` each:
  p50, p95, look-ups a second, in three mixes: *a crawl's day* (the URLs of
  ``--crawl-sites`` random sites, asked in random order: each site read on its first
  look-up, then kept), the same again (*warm*), and *scattered* (each look-up a URL of
  another random site: every one a first read, the worst case);
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
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

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
    parser.add_argument("--crawl-sites", type=int, default=300, help="sites of a crawl's day")
    parser.add_argument("--scattered", type=int, default=20_000, help="sites scattered over")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)
    database = args.keep / "history.sqlite3"
    crawl = _listed_urls(database, args.crawl_sites, every=True, seed=7)
    scattered = _listed_urls(database, args.scattered, every=False, seed=11)
    print(f"a crawl's day: {len(crawl):,} URLs of {args.crawl_sites} sites; scattered: "
          f"{len(scattered):,} URLs of as many sites", flush=True)  # fmt: skip
    for backend in args.backends.split(","):
        with _database(backend, args.keep) as db:
            _bench(backend, db, {"crawl day": crawl, "warm": crawl, "scattered": scattered},
                   args)  # fmt: skip
    return 0


def _bench(backend: str, db: str, mixes: dict[str, list[str]], args: argparse.Namespace) -> None:
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
        for label, urls in mixes.items():
            _trust(base, urls, args.clients, args.seconds, label, scattered=label == "scattered")
            print(f"  RSS after trust ({label}): {_rss(child.pid):.0f} MB", flush=True)
        if shutil.which("wrk"):
            _wrk(base, mixes["crawl day"], args.clients, args.seconds)
            print(f"  RSS after wrk: {_rss(child.pid):.0f} MB", flush=True)
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


def _trust(
    base: str, urls: list[str], clients: int, seconds: float, label: str, *, scattered: bool
) -> None:
    took: list[list[float]] = [[] for _ in range(clients)]
    failures: list[str] = []
    stop = time.perf_counter() + seconds

    def run(number: int) -> None:
        picks = random.Random(number)
        turn = number  # scattered: each client walks its own share of the sites in turn
        with httpx.Client(base_url=base, timeout=60) as client:
            while time.perf_counter() < stop:
                if scattered:
                    url, turn = urls[turn % len(urls)], turn + clients
                else:
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


#: wrk's script: a random URL of the list for each request; the percentiles at the end.
_WRK_SCRIPT = """
paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
math.randomseed(7)
request = function() return wrk.format("GET", paths[math.random(#paths)]) end
done = function(summary, latency, requests)
  local shape = "wrk: %%d requests, %%d errors, p50 %%.1f ms, p95 %%.1f ms, p99 %%.1f ms\\n"
  io.write(string.format(shape, summary.requests, summary.errors.status + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000))
end
"""


def _wrk(base: str, urls: list[str], clients: int, seconds: float) -> None:
    """The crawl's day again from wrk (Debian's; a C client, so the clients' own CPU
    takes less of the 2 cores than 16 Python threads do): 2 threads, ``clients``
    connections."""
    with tempfile.TemporaryDirectory() as folder:
        paths = Path(folder) / "paths.txt"
        paths.write_text("".join(f"/api/v1/trust?url={quote(u, safe='')}\n" for u in urls))
        script = Path(folder) / "trust.lua"
        script.write_text(_WRK_SCRIPT % paths)
        done = subprocess.run(
            ["wrk", "-t2", f"-c{clients}", f"-d{int(seconds)}s", "-s", str(script), base],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    rate = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    summary = next((ln for ln in done.stdout.splitlines() if ln.startswith("wrk:")), "wrk: ?")
    print(f"  trust (crawl day, wrk, {clients} connections): {summary[5:]}, "
          f"{float(rate.group(1)) if rate else float('nan'):,.0f}/s", flush=True)  # fmt: skip


def _ms(values: list[float], percent: int) -> str:
    cut = statistics.quantiles(values, n=100)[percent - 1] if len(values) > 1 else values[0]
    return f"{cut * 1000:.1f} ms"


def _rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _listed_urls(database: Path, sites: int, *, every: bool, seed: int) -> list[str]:
    """The URLs listed in the latest inventories of ``sites`` random sites: all of each
    (``every``) or one of each (read from the SQLite history, which the PostgreSQL one
    copies). The generated inventories name one placeholder origin; each URL is given
    its site's own (the look-up keys a site's URLs by path and query)."""
    from auditor.history.state import decode_state

    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        (top,) = conn.execute("SELECT max(site_id) FROM url_state").fetchone()
        chooser = random.Random(seed)
        ids = chooser.sample(range(1, top + 1), sites)
        picked: list[str] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = (
                "SELECT s.origin, u.data FROM url_state u JOIN sites s ON s.id = u.site_id"
                f" WHERE u.site_id IN ({marks})"
            )
            for origin, blob in conn.execute(query, chunk):
                locs = [_moved(str(loc), origin) for loc in decode_state(blob)["loc"]]
                picked.extend(locs if every else [chooser.choice(locs)])
        chooser.shuffle(picked)
        return picked
    finally:
        conn.close()


def _moved(loc: str, origin: str) -> str:
    """``loc`` on ``origin``: its path and query kept."""
    parts = urlsplit(loc)
    return origin + (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class _database:
    """The history's location on ``backend``, its PostgreSQL cluster started if needed."""

    def __init__(self, backend: str, keep: Path) -> None:
        self.backend, self.keep, self.server = backend, keep, None

    def __enter__(self) -> str:
        if self.backend == "sqlite":
            return str(self.keep / "history.sqlite3")
        import psycopg

        from tests.benchmarks.bench_history import KeptServer

        self.server = KeptServer(self.keep / "pg")
        with psycopg.connect(self.server.url(), autocommit=True) as conn:
            sql = "SELECT datname FROM pg_database WHERE datname LIKE 'fleet_100000_%'"
            names = sorted(str(row[0]) for row in conn.execute(sql))
        return self.server.url(names[0], "auditor")

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
