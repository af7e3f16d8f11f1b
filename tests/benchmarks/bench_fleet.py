"""Fleets: politeness efficiency, memory against fleet size, CPU scaling across workers.

Run by hand, never by pytest:

    python3 tests/benchmarks/bench_fleet.py              # the three at full size (~25 min)
    python3 tests/benchmarks/bench_fleet.py --cases politeness --sites 10000 \
        --concurrency 256                                # a team's fleet, whole (~20 min)
    python3 tests/benchmarks/bench_fleet.py --sites 64 --memory-sites 64,256 \\
        --cpu-sites 4 --cpu-urls 50000                   # a quick look (~2 min)

The sites are the demo simulator's (:class:`auditor.demo.site.SimulatedSite`, the
behaviours of ``BEHAVIOURS`` in turn, each served by a
:class:`auditor.demo.server.SiteServer`), every one on its own 127.77.x.y address so
per-host politeness is real, served from a separate process (``--serve``, the same file)
so their CPU is not counted in the fleet's process tree.

1. **Politeness efficiency** (issue 12): ``auditor audit --sites FILE --concurrency 64
   --sample 20 --full-sample --out DIR`` as a child process, the default ``--delay 1``,
   reports written as usual. The bound is the politeness the fleet cannot avoid: for each
   site, (its requests as its server logged them - 1) x the delay, summed over the fleet,
   divided by the sites in flight (the concurrency, or every site of a smaller fleet);
   or the longest of one site's alone, if longer (a small fleet's sites all run at once:
   the last one ends no sooner than its own politeness). Prints wall / bound (target <=
   1.3; <= 1.2 of the larger of the bound and the CPU floor at 10,000 sites; <= 2 for a
   30-site fleet, issue 36), the CPU a site by role, the time from the command's start
   to the first request and from the last answer to the command's end, the history's
   size, and the pairs of requests to one host closer than the delay (from the
   servers' logs, with their gaps).
   ``--reports`` as the command's (default ``changed``: a first fleet draws every site's
   report, about 0.1 s of CPU each; ``none`` measures the fleet alone).
2. **Memory**: the same command for ``--memory-sites`` fleets (500 and 2,000, a small
   delay), the peak RSS of its whole process tree (the command, the Dask nannies and
   workers, the report writers) sampled every 0.2 s. Sites in flight are the same in both,
   so the peaks should be within 20% (printed: larger / smaller).
3. **CPU scaling**: ``--cpu-sites`` sites whose walks are heavy (``--cpu-urls`` URLs each, an
   index of 50,000-URL files), ``--delay 0``, through the library (``audit_fleet`` on a
   ``LocalCluster`` of 1, then 2 worker processes, 4 sites in flight either way, history
   saved as usual, no reports): sites per second and the ratio 2 / 1 (target >= 1.6 on 2
   cores).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fleet.servers import STAMP_SLACK  # noqa: E402 - the tests' own slack for a stamp

POLITENESS_TARGET = 1.3
MEMORY_TARGET = 1.2
CPU_TARGET = 1.6
PAGES_PER_SITE = 60  # pages of a demo site (the sample takes 20 of them)
FILE_URLS = 50_000  # URLs per sitemap file of a heavy site (the protocol's limit)
ORIGIN = "http://origin.invalid"  # in a heavy site's cached sitemaps, for each server's own


def _raise_file_limit() -> None:
    """As many open files as allowed: a server socket per site, connections besides."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _address(n: int) -> str:
    return f"127.77.{n // 250}.{n % 250 + 1}"


# -- the servers (a child process) ------------------------------------------------------------


def _serve(kind: str, count: int, urls: int, ready: Path) -> None:
    """Serve ``count`` sites; write their origins to ``ready``; on a line from stdin,
    print each server's request log as JSON and exit."""
    from auditor.demo.server import SiteServer
    from auditor.demo.site import BEHAVIOURS, SimulatedSite

    # Thousands of idle servers must never wake up on their own: started together, at 30 s
    # they woke together, 10,000 threads at once fighting for the GIL (a load average of
    # 5,000, most of a core). These servers are never shut down (the process just exits).
    SiteServer.poll_interval = 86_400.0
    names = list(BEHAVIOURS)
    if kind == "heavy":
        sections = {f"s{k}": BEHAVIOURS["accurate-jsonld"] for k in range(urls // FILE_URLS)}
        template = SimulatedSite("heavy", sections, FILE_URLS, seed=1)
        cache: dict[str, str] = {}

        class Heavy(SiteServer):
            def respond(self, path: str) -> tuple[int, str, str]:
                if not path.startswith("/sitemap"):
                    return super().respond(path)
                if path not in cache:  # the same files for every heavy site but the origin
                    cache[path] = SiteServer.respond(_Template, path)[2]
                return 200, "application/xml", cache[path].replace(ORIGIN, self.origin)

        class _Template:
            site, origin = template, ORIGIN
            clock = staticmethod(lambda: template.clock)

        for path in ["/sitemap.xml", *(f"/sitemap-{name}.xml" for name in sections)]:
            cache[path] = SiteServer.respond(_Template, path)[2]  # drawn once, before timing
        servers = [Heavy(template, host=_address(n)) for n in range(count)]
    else:
        servers = [
            SiteServer(
                SimulatedSite(
                    names[n % len(names)],
                    {"pages": BEHAVIOURS[names[n % len(names)]]},
                    PAGES_PER_SITE,
                    seed=n,
                ),
                host=_address(n),
            )
            for n in range(count)
        ]
    ready.write_text(json.dumps([s.origin for s in servers]))
    sys.stdin.readline()
    print(
        json.dumps(
            {
                s.origin: [(r.at, r.answered or r.at, r.writing or r.at) for r in s.log]
                for s in servers
            }
        )
    )


@contextmanager
def _servers(kind: str, count: int, urls: int = 0) -> Iterator[tuple[list[str], list[dict]]]:
    """Origins of ``count`` sites served by a child process; the second item is filled
    with the servers' logs when the block ends."""
    with tempfile.TemporaryDirectory() as folder:
        ready = Path(folder) / "ready.json"
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", kind, str(count), str(urls), str(ready)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        while not ready.exists() or not ready.read_text():
            if child.poll() is not None:
                raise SystemExit("the servers did not start")
            time.sleep(0.2)
        logs: list[dict] = []
        try:
            yield json.loads(ready.read_text()), logs
        finally:
            out, _ = child.communicate("logs\n", timeout=120)
            logs.append(json.loads(out))


def _politeness_of(
    logs: dict[str, list], delay: float
) -> tuple[int, float, float, list[tuple[float, float]]]:
    """Requests in all, the politeness time the fleet could not avoid (per host, the
    delay between each two of its requests), the longest of one host alone, and the
    pairs that came too close: the gap (seconds from one request's answered stamp to
    the next one's arrival) and how long after its last write began the first was
    stamped answered."""
    by_host: dict[str, list] = defaultdict(list)
    for origin, log in logs.items():
        by_host[origin.split("//", 1)[1].rsplit(":", 1)[0]] += log
    requests = sum(len(log) for log in by_host.values())
    chains = [max(len(log) - 1, 0) * delay for log in by_host.values()]
    unavoidable, longest = sum(chains), max(chains, default=0.0)
    close: list[tuple[float, float]] = []
    for log in by_host.values():
        log.sort()
        for a, b in itertools.pairwise(log):
            if b[0] - a[1] < delay - STAMP_SLACK:  # (gap, the answer's last write to its stamp)
                close.append((b[0] - a[1], a[1] - a[2]))
    return requests, unavoidable, longest, sorted(close)


# -- the fleet command and its process tree ------------------------------------------------------


def _children_cpu() -> float:
    """CPU seconds (user and system) of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class _PeakRss:
    """The peak summed RSS of a process and its descendants, sampled in a thread; and
    the CPU seconds of each, by role (as last seen: a process that ends loses its last
    0.2 s): the command itself (with the Dask scheduler), the report drawers (they load
    matplotlib), the Dask workers (and the resource tracker)."""

    def __init__(self, pid: int, every: float = 0.2) -> None:
        import psutil

        self.peak = 0
        self.cpu: dict[int, tuple[str, float]] = {}
        self.unreaped: set[int] = set()  # the forkserver and the workers it forked
        self._root = psutil.Process(pid)
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                tree = [self._root, *self._root.children(recursive=True)]
            except psutil.Error:
                return
            total = 0
            for process in tree:
                with suppress(psutil.Error):
                    total += process.memory_info().rss
                    times = process.cpu_times()
                    self.cpu[process.pid] = (self._role(process), times.user + times.system)
                    if process.pid not in self.unreaped and self._forked(process):
                        self.unreaped.add(process.pid)
            self.peak = max(self.peak, total)
            self._stop.wait(self._every)

    def _role(self, process: object) -> str:
        pid = process.pid  # type: ignore[attr-defined]
        if pid == self._root.pid:
            return "the command"
        if self.cpu.get(pid, ("",))[0] == "report drawers":
            return "report drawers"
        with suppress(OSError):  # a report drawer has matplotlib's fonts loaded
            if "ft2font" in Path(f"/proc/{pid}/maps").read_text():
                return "report drawers"
        return "Dask workers and helpers"

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak

    def _forked(self, process: object) -> bool:
        """The multiprocessing forkserver (the local cluster's workers are forked from
        it) or a process it forked: the command never waits for them, so their CPU is
        not in its children's resource usage."""
        with suppress(Exception):
            if process.ppid() in self.unreaped:  # type: ignore[attr-defined]
                return True
            return "forkserver" in " ".join(process.cmdline())  # type: ignore[attr-defined]
        return False

    def unreaped_cpu(self) -> float:
        """CPU seconds of the processes the command did not wait for, as last seen."""
        return sum(self.cpu[pid][1] for pid in self.unreaped if pid in self.cpu)

    def by_role(self) -> dict[str, float]:
        roles: dict[str, float] = defaultdict(float)
        for role, seconds in self.cpu.values():
            roles[role] += seconds
        return dict(roles)


def _fleet_command(
    origins: list[str],
    folder: Path,
    delay: float,
    concurrency: int,
    sample: int,
    full: bool,
    reports: str = "changed",
) -> dict:
    """``auditor audit --sites`` over ``origins``: wall seconds, peak RSS, outcomes."""
    listing = folder / "sites.txt"
    listing.write_text("\n".join(origins) + "\n")
    command = [
        sys.executable, "-m", "auditor", "audit", "--sites", str(listing),
        "--concurrency", str(concurrency), "--delay", str(delay), "--sample", str(sample),
        "--db", str(folder / "history.sqlite3"), "--out", str(folder / "reports"), "--json",
    ]  # fmt: skip
    if full:
        command.append("--full-sample")
    command += ["--reports", reports]
    started, launched = time.perf_counter(), time.monotonic()
    child = subprocess.Popen(
        command,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    rss = _PeakRss(child.pid)
    before = _children_cpu()
    out, err = child.communicate()
    wall = time.perf_counter() - started
    reaped = _children_cpu() - before  # the command and every process it waited for
    peak = rss.stop()
    cpu = reaped + rss.unreaped_cpu()  # and those it did not (the forkserver's, as sampled)
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    failed = [r for r in lines if r.get("failed")]
    drawn = sum(1 for r in lines if r.get("report") and (folder / r["report"]).is_file())
    if child.returncode not in (0, 1):
        print(err[-2000:], file=sys.stderr)
    return {
        "wall": wall,
        "cpu": cpu,
        "reaped": reaped,
        "roles": rss.by_role(),
        "peak_mb": peak / 2**20,
        "results": len(lines) - len(failed),
        "failed": len(failed),
        "failures": sorted({f"{r['failed']['code']}: {r['failed']['detail']}" for r in failed})[:3],
        "reports": drawn,
        "status": child.returncode,
        "launched": launched,
        "history_mb": (folder / "history.sqlite3").stat().st_size / 2**20,
    }


def politeness(args: argparse.Namespace) -> None:
    """Wall time of a fleet against its politeness bound."""
    print(
        f"\n== politeness: {args.sites} sites, --sample {args.sample}"
        f"{' --full-sample' if args.full_sample else ''}, --delay {args.delay:g}, "
        f"--concurrency {args.concurrency}, --reports {args.reports}",
        flush=True,
    )
    before = _children_cpu()
    with tempfile.TemporaryDirectory() as folder, _servers("demo", args.sites) as (origins, logs):
        run = _fleet_command(
            origins,
            Path(folder),
            args.delay,
            args.concurrency,
            args.sample,
            args.full_sample,
            args.reports,
        )
    serving = _children_cpu() - before - run["reaped"]
    requests, unavoidable, longest, close = _politeness_of(logs[0], args.delay)
    first = min(stamps[0] for log in logs[0].values() for stamps in log) - run["launched"]
    last = max(stamps[1] for log in logs[0].values() for stamps in log) - run["launched"]
    # the politeness spread over the sites in flight, or one host's alone if longer (a
    # fleet of fewer sites than --concurrency has all in flight: each is its own chain)
    spread = unavoidable / min(args.concurrency, args.sites)
    bound = max(spread, longest)
    print(
        f"  {run['results']} results, {run['failed']} failed, {run['reports']} reports; "
        f"{requests:,} requests ({requests / args.sites:.1f} a site), {len(close)} pairs "
        f"closer than the delay by the answered stamp, "
        f"{sum(1 for gap, late in close if gap + late < args.delay - STAMP_SLACK)} even from "
        f"when the answer's last write began"
        + (
            " (gap s / answered after its last write began, s: "
            + ", ".join(f"{gap:.3f}/{late:.3f}" for gap, late in close[:10])
            + ")"
            if close
            else ""
        )
    )
    for failure in run["failures"]:
        print(f"  failed: {failure}")
    roles = ", ".join(f"{r} {c / args.sites * 1000:.1f}" for r, c in sorted(run["roles"].items()))
    print(
        f"  CPU: the fleet's processes {run['cpu']:.1f} s, {run['cpu'] / args.sites * 1000:.1f} "
        f"ms a site ({roles}, as last sampled); the servers "
        f"{serving / args.sites * 1000:.1f} ms a site"
    )
    floor = (run["cpu"] + serving) / (os.cpu_count() or 1)
    print(
        f"  politeness {unavoidable:,.0f} s in a row; bound {bound:.1f} s (spread over "
        f"{min(args.concurrency, args.sites)} in flight {spread:.1f} s, the longest host's "
        f"{longest:.1f} s); wall {run['wall']:.1f} s; ratio {run['wall'] / bound:.2f} "
        f"(target <= {POLITENESS_TARGET}; until 2026-12-04 the bound was politeness / "
        f"--concurrency, {unavoidable / args.concurrency:.1f} s, ratio "
        f"{run['wall'] * args.concurrency / unavoidable:.2f}); peak RSS "
        f"{run['peak_mb']:.0f} MB",
        flush=True,
    )
    print(
        f"  CPU floor (all that CPU on {os.cpu_count()} idle cores) {floor:.1f} s = "
        f"{floor / bound:.2f} x the bound; wall / the larger of the two "
        f"{run['wall'] / max(bound, floor):.2f}"
    )
    print(
        f"  fixed cost: first request {first:.2f} s after the command started, the last "
        f"answered at {last:.2f} s, then {run['wall'] - last:.2f} s to the command's end "
        f"(saves, reports, closing); history {run['history_mb']:,.0f} MB "
        f"({run['history_mb'] * 1024 / args.sites:.0f} kB a site)"
    )


def memory(args: argparse.Namespace) -> None:
    """Peak RSS of the fleet's process tree for two fleet sizes."""
    sizes = [int(n) for n in args.memory_sites.split(",")]
    print(
        f"\n== memory: fleets of {' and '.join(map(str, sizes))} sites, --concurrency "
        f"{args.concurrency}, --delay {args.memory_delay:g}, --sample {args.sample}, --reports "
        f"{args.reports}",
        flush=True,
    )
    peaks = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder, _servers("demo", size) as (origins, _):
            run = _fleet_command(
                origins,
                Path(folder),
                args.memory_delay,
                args.concurrency,
                args.sample,
                True,
                args.reports,
            )
        peaks.append(run["peak_mb"])
        print(
            f"  {size:5} sites: peak RSS {run['peak_mb']:.0f} MB (the whole tree), wall "
            f"{run['wall']:.0f} s, {run['results']} results, {run['failed']} failed",
            flush=True,
        )
    print(f"  largest / smallest fleet: {peaks[-1] / peaks[0]:.2f} (target <= {MEMORY_TARGET})")


def cpu_scaling(args: argparse.Namespace) -> None:
    """Sites per second with heavy walks on 1 and on 2 worker processes."""
    from distributed import Client, LocalCluster

    from auditor.audit import AuditOptions
    from auditor.fleet import audit_fleet
    from auditor.history import History
    from auditor.sampler import SampleOptions
    from auditor.scorer.result import AuditResult

    print(
        f"\n== CPU scaling: {args.cpu_sites} sites of {args.cpu_urls:,} URLs, --delay 0, "
        f"--sample {args.sample}, 4 sites in flight, the library, no reports",
        flush=True,
    )
    options = AuditOptions(sample=SampleOptions(sample=args.sample, delay=0.0), seed=1)
    rates = {}
    with _servers("heavy", args.cpu_sites, args.cpu_urls) as (origins, _):
        for workers in (1, 2):
            with (
                tempfile.TemporaryDirectory() as folder,
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=4 // workers,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=50,
                ) as cluster,
                Client(cluster) as client,
                History.open(Path(folder) / "h.sqlite3") as history,
            ):
                client.run(lambda: __import__("auditor.fleet.work"))  # imports before timing
                started = time.perf_counter()
                done = list(audit_fleet(origins, history, options, client=client))
                wall = time.perf_counter() - started
            ok = sum(isinstance(o, AuditResult) for o in done)
            rates[workers] = ok / wall
            print(
                f"  {workers} worker process{'es' if workers > 1 else ''}: {ok} of "
                f"{len(origins)} sites in {wall:.1f} s, {rates[workers]:.3f} sites/s",
                flush=True,
            )
    print(f"  2 workers / 1 worker: {rates[2] / rates[1]:.2f} (target >= {CPU_TARGET})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", default="politeness,memory,cpu")
    parser.add_argument("--sites", type=int, default=500, help="politeness: sites")
    parser.add_argument("--delay", type=float, default=1.0, help="politeness: --delay")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument(
        "--sequential",
        dest="full_sample",
        action="store_false",
        help="politeness: let a site stop sampling once decided (default: --full-sample)",
    )
    parser.add_argument(
        "--reports", default="changed", choices=("changed", "all", "none"), help="politeness"
    )
    parser.add_argument("--memory-sites", default="500,2000")
    parser.add_argument("--memory-delay", type=float, default=0.1)
    parser.add_argument("--cpu-sites", type=int, default=12)
    parser.add_argument("--cpu-urls", type=int, default=200_000)
    args = parser.parse_args()
    _raise_file_limit()
    cases = args.cases.split(",")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min); cores: "
          f"{os.cpu_count()}")  # fmt: skip
    if "politeness" in cases:
        politeness(args)
    if "memory" in cases:
        memory(args)
    if "cpu" in cases:
        cpu_scaling(args)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        _raise_file_limit()
        _serve(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]))
    else:
        main()
