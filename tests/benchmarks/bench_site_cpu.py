"""A fleet site's CPU, in one process: what a Dask worker and the command pay a site.

Run by hand, never by pytest:

    python3 tests/benchmarks/bench_site_cpu.py --sites 200            # CPU a site, by part
    python3 tests/benchmarks/bench_site_cpu.py --sites 200 --profile 40   # and cProfile's top
    python3 tests/benchmarks/bench_site_cpu.py --fleet --sites 300 --delay 0.2  # a fleet, by thread

Demo sites (:class:`auditor.demo.site.SimulatedSite`, the behaviours of ``BEHAVIOURS`` in
turn, 60 pages each) served by a child process (``bench_fleet``'s servers, so their CPU
is not counted here), each audited as a fleet's first audit of it (``--sample 20
--full-sample``, ``--delay 0``): what the command does (:func:`auditor.audit.previous_of`,
the task pickled, the bundle unpickled, :func:`auditor.audit.save_audit` to SQLite) and
what a worker does (the task unpickled, :func:`auditor.fleet.work.audit_task` with the
host table over its own socket (:mod:`auditor.fleet.channel`, served from this process as
a worker serves it, one connection kept from site to site as a worker thread keeps it),
the bundle pickled). Dask's own scheduling is not here. Prints the CPU seconds a site
(``time.process_time``: every thread of this process) of each part, the median of
``--rounds`` rounds.

``--fleet``: the same sites as one fleet through the library (:func:`auditor.fleet.audit_fleet`
on a local cluster of 2 worker processes, ``--concurrency`` in flight, ``--delay``), and the
CPU a site of the command and of the workers' threads by kind, read from ``/proc`` when the
fleet is over (the threads that ended meanwhile are the host table line's, one a site, and
the like).

Touches: the network (loopback), the disk.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pickle
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_fleet import _raise_file_limit, _servers  # noqa: E402


def _round(origins: list[str], folder: Path, profile: cProfile.Profile | None) -> dict[str, float]:
    """Audit every origin once into a fresh history: CPU seconds by part, summed."""
    from auditor.audit import AuditBundle, AuditOptions, previous_of, save_audit
    from auditor.fleet.channel import TableServer, thread_table
    from auditor.fleet.gate import HostTable
    from auditor.fleet.work import SiteTask, audit_task
    from auditor.history import History
    from auditor.http import PAGE_ACCEPT, HttpOptions
    from auditor.sampler import SampleOptions
    from auditor.walker import WalkOptions

    options = AuditOptions(
        walk=WalkOptions(http=HttpOptions()),
        sample=SampleOptions(  # as `--sample 20 --full-sample --delay 0`
            sample=20,
            delay=0.0,
            sequential=False,
            http=HttpOptions(retries=0, accept=PAGE_ACCEPT),
        ),
    )
    server = TableServer(HostTable(0.0), "127.0.0.1")
    parts: dict[str, float] = defaultdict(float)
    history = History.open(folder / "history.sqlite3")
    if profile is not None:
        profile.enable()
    try:
        for origin in origins:
            t0 = time.process_time()
            task = SiteTask(origin, origin, previous_of(history, origin), options, 600.0)
            shipped = pickle.dumps(task, protocol=5)
            t1 = time.process_time()
            table = thread_table(server.line, 30.0)  # as run_on_worker: kept between sites
            outcome = audit_task(pickle.loads(shipped), table)
            table.site_over()
            back = pickle.dumps(outcome, protocol=5)
            t2 = time.process_time()
            bundle = pickle.loads(back)
            if not isinstance(bundle, AuditBundle):
                raise SystemExit(f"{origin}: {bundle}")
            save_audit(history, bundle)
            t3 = time.process_time()
            parts["command: previous, pickle"] += t1 - t0
            parts["worker: audit, pickle"] += t2 - t1
            parts["command: unpickle, save"] += t3 - t2
            parts["bundle bytes"] += len(back)
    finally:
        if profile is not None:
            profile.disable()
        thread_table(server.line, 30.0).close()
        server.close()
        history.close()
    return dict(parts)


def _threads_cpu() -> dict[str, float]:
    """On a worker: CPU seconds of its threads by kind, and of the whole process."""
    import threading

    tick = os.sysconf("SC_CLK_TCK")
    names = {t.native_id: t.name for t in threading.enumerate()}
    kinds: dict[str, float] = defaultdict(float)
    for tid in os.listdir("/proc/self/task"):
        try:  # (a runner's threads end once the fleet closes it: counted as ended)
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):  # (it ended as it was read)
            continue
        name = names.get(int(tid), "")
        tasks = ("ThreadPool", "Dask-Default", "auditor-site")  # a Dask task's or a runner's
        kind = (
            "task threads" if any(word in name for word in tasks)
            else "event loop" if name == "MainThread"
            else "other live threads"
        )  # fmt: skip
        kinds[kind] += (int(fields[11]) + int(fields[12])) / tick
    times = os.times()
    kinds["ended threads"] = times.user + times.system - sum(kinds.values())
    return dict(kinds)


def _watch_collector() -> None:
    """On a worker: add up the CPU its garbage collector takes, by generation."""
    import gc
    import time

    spent = {0: 0.0, 1: 0.0, 2: 0.0}
    runs = {0: 0, 1: 0, 2: 0}
    started = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            spent[info["generation"]] += time.thread_time() - started[0]
            runs[info["generation"]] += 1

    gc.callbacks.append(timed)
    gc.bench_collector = (spent, runs)  # type: ignore[attr-defined]


def _collector() -> tuple[dict[int, float], dict[int, int]]:
    import gc

    return gc.bench_collector  # type: ignore[attr-defined,no-any-return]


def _fleet(origins: list[str], folder: Path, delay: float, concurrency: int) -> None:
    """One fleet through the library; the CPU a site by role and thread kind."""
    from auditor.audit import AuditOptions
    from auditor.fleet.cluster import local_client
    from auditor.fleet.engine import audit_fleet
    from auditor.history import History
    from auditor.http import PAGE_ACCEPT, HttpOptions
    from auditor.sampler import SampleOptions

    page_http = HttpOptions(retries=0, accept=PAGE_ACCEPT)
    options = AuditOptions(
        sample=SampleOptions(sample=20, delay=delay, sequential=False, http=page_http)
    )
    history = History.open(folder / "history.sqlite3")
    with local_client(concurrency) as client:
        client.run(_watch_collector)
        before = client.run(_threads_cpu)
        started = os.times()
        done = sum(1 for _ in audit_fleet(origins, history, options, client=client))
        ended = os.times()
        after = client.run(_threads_cpu)
        collected = client.run(_collector)
    history.close()
    n = len(origins)
    command = ended.user + ended.system - started.user - started.system
    print(
        f"{done} of {n} sites; the command (and the scheduler) {command / n * 1000:.1f} ms a site"
    )
    kinds: dict[str, float] = defaultdict(float)
    for worker, seconds in after.items():
        for kind, value in seconds.items():
            kinds[kind] += value - before[worker].get(kind, 0.0)
    print(f"the workers {sum(kinds.values()) / n * 1000:.1f} ms a site:")
    for kind, value in sorted(kinds.items(), key=lambda item: -item[1]):
        print(f"  {kind:20s} {value / n * 1000:6.1f} ms")
    for generation in (0, 1, 2):
        spent = sum(c[0][generation] for c in collected.values())
        runs = sum(c[1][generation] for c in collected.values())
        print(
            f"  of which the collector, generation {generation}: "
            f"{spent / n * 1000:.1f} ms ({runs} runs)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N by own time")
    parser.add_argument("--dump", type=Path, help="cProfile's stats to this file")
    parser.add_argument("--fleet", action="store_true", help="one fleet, by thread")
    parser.add_argument("--delay", type=float, default=0.2, help="the fleet's --delay")
    parser.add_argument("--concurrency", type=int, default=64, help="the fleet's sites in flight")
    args = parser.parse_args()
    _raise_file_limit()
    rounds: list[dict[str, float]] = []
    profile = cProfile.Profile(time.thread_time) if args.profile else None
    with _servers("light", args.sites) as (origins, _logs):
        if args.fleet:
            with tempfile.TemporaryDirectory() as folder:
                _fleet(origins, Path(folder), args.delay, args.concurrency)
            return
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as folder:
                rounds.append(_round(origins, Path(folder), profile))
    for part in rounds[0]:
        each = [r[part] / args.sites for r in rounds]
        if "bytes" in part:
            print(f"{part:30s} {statistics.median(each):8.0f} B")
            continue
        runs = ", ".join(f"{e * 1000:.1f}" for e in each)
        print(f"{part:30s} {statistics.median(each) * 1000:8.2f} ms   ({runs})")
    total = [sum(v for k, v in r.items() if "bytes" not in k) / args.sites for r in rounds]
    print(f"{'all':30s} {statistics.median(total) * 1000:8.2f} ms")
    if profile is not None:
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        if args.dump:
            stats.dump_stats(args.dump)
        stats.sort_stats("tottime").print_stats(args.profile)
        stats.sort_stats("cumulative").print_stats(args.profile)
        print(out.getvalue())


if __name__ == "__main__":
    main()
