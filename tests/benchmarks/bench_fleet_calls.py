"""What sending a site to a worker and hearing back costs a fleet, apart from the audit:
a Dask task a site (as the engine did until issue 36's sixth wave), an actor call held
open while its site runs, and the site runners (auditor.fleet.runners).

Each way runs the same sleeping "sites" (a few seconds each, returning 22 kB as a
bundle does) on a local cluster of two worker processes of 128 threads, 256 in flight,
and prints the CPU a site of the owner's process (the command, with the scheduler in
it) and of the two workers (from /proc), and the wall time::

    python3 tests/benchmarks/bench_fleet_calls.py --sites 1500 --rounds 2

Touches: the network.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

IN_FLIGHT = 256
BUNDLE = 22_000  # bytes a site returns


def _site(seconds: float) -> bytes:
    time.sleep(seconds)
    return b"x" * BUNDLE


class HeldCaller:
    """An actor whose call is held open while its site runs (the runners' first shape)."""

    def __init__(self, threads: int) -> None:
        self._pool = ThreadPoolExecutor(threads)

    async def run(self, seconds: float) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(self._pool, _site, seconds)


class _Seconds(float):
    """A sleeping site as the runners take a task: it has a ``site``."""

    site = "sleeping"


def _sleeping_sites() -> None:
    """On a worker: the runners' sites sleep instead of auditing."""
    import auditor.fleet.runners as runners

    runners.run_on_worker = lambda task, gate: _site(task)  # type: ignore[assignment]


def _tasks(client: Any, seconds: list[float]) -> None:
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    left, running = list(seconds), set()
    while left or running:
        while left and len(running) < IN_FLIGHT:
            future = client.submit(_site, left.pop(), pure=False)
            future.add_done_callback(finished.put)
            running.add(future)
        done = _drain(finished)
        if done:
            client.gather(done)
        running.difference_update(done)


def _held(client: Any, seconds: list[float]) -> None:
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    actors = [
        client.submit(HeldCaller, IN_FLIGHT // 2, actor=True, workers=[w], pure=False).result()
        for w in client.nthreads()
    ]

    async def hand_over(call: Any) -> None:
        await call
        finished.put(call)

    left, running, sent = list(seconds), set(), 0
    while left or running:
        while left and len(running) < IN_FLIGHT:
            call = actors[sent % len(actors)].run(left.pop())
            sent += 1
            client.loop.add_callback(hand_over, call)
            running.add(call)
        running.difference_update(_drain(finished))


def _runners(client: Any, seconds: list[float]) -> None:
    from auditor.fleet.runners import Runners

    client.run(_sleeping_sites)
    runners = Runners(client)
    left, running = list(seconds), set()
    while left or running:
        room = min(IN_FLIGHT - len(running), runners.free(), len(left))
        if room > 0:
            running.update(runners.send([_Seconds(left.pop()) for _ in range(room)], None))  # type: ignore[arg-type]
        running.difference_update(call for call, _ in runners.answers(2.0))
    runners.close()


def _drain(finished: queue.SimpleQueue[Any]) -> list[Any]:
    try:
        done = [finished.get(timeout=2.0)]
    except queue.Empty:
        return []
    while not finished.empty():
        done.append(finished.get_nowait())
    return done


WAYS = {"a Dask task a site": _tasks, "an actor call held open": _held, "the runners": _runners}


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _one(way: str, sites: int, low: float, high: float) -> tuple[float, float, float]:
    from distributed import Client, LocalCluster

    rng = random.Random(1)
    seconds = [rng.uniform(low, high) for _ in range(sites)]
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=IN_FLIGHT // 2, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.submit(_site, 0).result()
        workers = list(client.run(os.getpid).values())
        own, theirs, started = os.times(), sum(map(_cpu_of, workers)), time.monotonic()
        WAYS[way](client, seconds)
        wall = time.monotonic() - started
        after = os.times()
        mine = after.user + after.system - own.user - own.system
        return mine / sites * 1e3, (sum(map(_cpu_of, workers)) - theirs) / sites * 1e3, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, nargs=2, default=(3.0, 7.0))
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f}; {args.sites} sites of {args.seconds} s")
    for round_ in range(args.rounds):
        for way in WAYS:
            owner, workers, wall = _one(way, args.sites, *args.seconds)
            print(
                f"  round {round_ + 1}, {way}: owner {owner:.2f} ms a site, "
                f"workers {workers:.2f} ms, wall {wall:.1f} s"
            )


if __name__ == "__main__":
    main()
