"""The fleet's site runners: one long-lived Dask actor on each worker, running the sites
sent to it in threads of its own, answering the owner directly.

Why not a Dask task a site: a task is a round of the scheduler (the graph, its
transitions, the worker's report, the gather through the scheduler, the release). The
scheduler now sees one task a worker for the whole fleet.

Sites are started by a short call (:meth:`SiteRunner.start`), those sent at one look
together; the finished ones come back together, in the answer to the one call each
runner keeps waiting on the worker (:meth:`SiteRunner.finished`), which the owner makes
again half a second after an answer while the runner is busy, so that what finishes
meanwhile comes along. A runner holds two of the client's connections whatever its
sites in flight (a call held open a site would take one each, and a client has 512).

What it costs (``tests/benchmarks/bench_fleet_calls.py``: 1,500 sleeping sites
returning 22 kB, 256 in flight on two workers of 128 threads), the owner's CPU a site and
the workers': a Dask task a site 4.8-5.1 and 7.1 ms; an actor call held open while its
site runs 2.4 and 2.2; the runners 1.1-1.6 and 2.2-2.4, for up to half a second more
before the owner hears of a site. In a fleet of 10,000 demo sites the command's CPU a
site went from 9.1 to 5.3 ms.

What Dask did for a task the owner now does for a call (:class:`Runners`): a worker that
dies or is declared dead takes its runner with it, and the sites that were running there
are handed back to be sent again (:meth:`Runners.lost`); a worker started again gets a
runner of its own at the next look.

Touches: the network.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import itertools
import logging
import queue
import time
from concurrent.futures import Future as ThreadFuture
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auditor.fleet.work import audit_task

if TYPE_CHECKING:
    from distributed import Client

    from auditor.audit import AuditBundle
    from auditor.fleet.cluster import GateRef
    from auditor.fleet.outcome import SiteFailure
    from auditor.fleet.work import GateLoss, SiteTask

__all__ = ["LOOK_EVERY", "SITE_THREAD", "Runners", "SiteRunner", "run_on_worker"]

#: Seconds between the owner's looks at which workers it has a runner on.
LOOK_EVERY = 2.0
#: The name of a runner's threads (``auditor-site_0``, ...): a site runs in one.
SITE_THREAD = "auditor-site"
_START_TIMEOUT = 30.0  # seconds for a runner to start on its worker, then left for a look
_CLOSE_TIMEOUT = 5.0  # seconds for a runner to hear it is closed (its worker wedged: left)
_FINISHED_WAIT = 2.0  # seconds a runner holds the owner's call for finished sites
#: Seconds the owner lets a runner's finished sites gather before it asks again: a
#: call less for each site that finishes meanwhile (and the sites sent in their place
#: go together too), for that much more before the owner hears of a site.
_GATHER_FOR = 0.5
#: ... while more than this many sites are running on the runner: a small fleet, or a
#: fleet's last sites, are heard of as soon as they finish.
_GATHER_WHILE = 8
log = logging.getLogger(__name__)


def run_on_worker(task: SiteTask, gate: GateRef) -> AuditBundle | SiteFailure | GateLoss:
    """One site, as a worker runs it: behind the fleet's host table."""
    table = gate.table()
    try:
        return audit_task(task, table)
    finally:
        table.site_over()


class SiteRunner:
    """The Dask actor on a worker: runs up to ``threads`` sites at once, each in a thread
    of its own (a site mostly waits on politeness), and keeps what they return until the
    owner asks (:meth:`finished`)."""

    #: Sites the runners of this worker process were sent, all fleets together (a look
    #: at the workers: ``client.run(lambda: SiteRunner.sites_sent)``).
    sites_sent = 0

    def __init__(self, threads: int) -> None:
        self._pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix=SITE_THREAD)
        self._done: list[tuple[int, object]] = []  # (call, what the site returned)
        self._any_done = asyncio.Event()

    async def start(self, sites: list[tuple[int, SiteTask]], gate: GateRef) -> None:
        """Start each site of ``sites`` in a thread of the runner (``call``, ``task``: the
        owner's number for the site, and the site)."""
        loop = asyncio.get_running_loop()
        for call, task in sites:
            SiteRunner.sites_sent += 1  # (on the worker's event loop: one at a time)
            context = contextvars.copy_context()  # Dask's worker, as a task would see it
            running = self._pool.submit(context.run, run_on_worker, task, gate)
            running.add_done_callback(functools.partial(self._hand_over, loop, call, task.site))

    def _hand_over(
        self, loop: asyncio.AbstractEventLoop, call: int, site: str, ended: ThreadFuture[Any]
    ) -> None:
        loop.call_soon_threadsafe(self._ended, call, site, ended)

    def _ended(self, call: int, site: str, ended: ThreadFuture[Any]) -> None:
        from auditor.fleet.outcome import SiteFailure

        try:
            value = ended.result()
        except BaseException as exc:  # (cancelled by close, or a bug): the site's failure
            value = SiteFailure(site, "error", f"{type(exc).__name__}: {exc}")
        self._done.append((call, value))
        self._any_done.set()

    async def finished(self, wait: float) -> list[tuple[int, object]]:
        """The sites finished since the last ask, waiting up to ``wait`` seconds for one."""
        if not self._done:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._any_done.wait(), wait)
        done, self._done = self._done, []
        self._any_done.clear()
        return done

    def close(self) -> None:
        """Start no site more; those running finish on their own."""
        self._pool.shutdown(wait=False, cancel_futures=True)


@dataclass
class _Runner:
    """The owner's view of one worker's runner."""

    address: str
    threads: int
    future: Any  # the actor's Dask future: holds it on its worker
    actor: Any
    calls: set[int] = field(default_factory=set)  # sites sent and not back yet


class Runners:
    """The owner's side of the runners: one on each worker of ``client``'s cluster, the
    sites in flight on each, and what they return as it comes (collected by the
    client's event loop, so waiting costs nothing a site in flight)."""

    def __init__(self, client: Client) -> None:
        self._client: Any = client  # (Dask's methods are untyped)
        self._runners: dict[str, _Runner] = {}
        self._starting: dict[str, tuple[int, Any]] = {}  # address: threads, future
        self._failed: set[str] = set()  # runners a call could not reach
        self._of: dict[int, str] = {}  # a site in flight: its runner's address
        # (call, runner, value): a site's value, or None and the exception a call raised
        self._answers: queue.SimpleQueue[tuple[int | None, str, object]] = queue.SimpleQueue()
        self._ids = itertools.count()
        self._looked = time.monotonic()
        self._start(self._workers())
        self._settle(wait=True)

    def free(self) -> int:
        """Sites that can be sent now: the runners' threads not running one."""
        return sum(max(0, r.threads - len(r.calls)) for r in self._usable())

    def send(self, tasks: list[SiteTask], gate: GateRef) -> list[int]:
        """Send each of ``tasks`` (no more than :meth:`free`) to the runner with the most
        threads free at the time, in one call a runner; the sites' numbers, in order."""
        batches: dict[str, list[tuple[int, SiteTask]]] = {}
        calls: list[int] = []
        for task in tasks:
            runner = max(self._usable(), key=lambda r: r.threads - len(r.calls))
            call = next(self._ids)
            runner.calls.add(call)
            self._of[call] = runner.address
            batches.setdefault(runner.address, []).append((call, task))
            calls.append(call)
        for address, sites in batches.items():
            started = self._runners[address].actor.start(sites, gate)
            self._client.loop.add_callback(self._started, [c for c, _ in sites], address, started)
        return calls

    def _usable(self) -> list[_Runner]:
        return [r for a, r in self._runners.items() if a not in self._failed]

    async def _started(self, calls: list[int], address: str, started: Any) -> None:
        try:
            await started
        except Exception as exc:  # the worker lost, the call refused: the owner decides
            for call in calls:
                self._answers.put((call, address, exc))

    async def _collect(self, runner: _Runner) -> None:
        """On the client's event loop, for the runner's life: what its sites returned."""
        while self._runners.get(runner.address) is runner:
            try:
                done = await runner.actor.finished(_FINISHED_WAIT)
            except Exception as exc:  # its worker lost, the actor gone: the owner hears of it
                self._answers.put((None, runner.address, exc))
                return
            for call, value in done:
                self._answers.put((call, runner.address, value))
            still = len(runner.calls) - len(done)  # (the owner takes them off later)
            if done and still > _GATHER_WHILE:  # what finishes meanwhile comes along
                await asyncio.sleep(_GATHER_FOR)

    def answers(self, timeout: float) -> list[tuple[int, object]]:
        """The sites back since the last look (a value, or the exception their call
        raised), waiting up to ``timeout`` seconds for one. A runner that could not be
        reached gets no site more; it is dropped at the next look (:meth:`lost`)."""
        try:
            taken = [self._answers.get(timeout=timeout)]
        except queue.Empty:
            return []
        with suppress(queue.Empty):
            while True:
                taken.append(self._answers.get_nowait())
        back: list[tuple[int, object]] = []
        for call, address, value in taken:
            unreached = call is None or isinstance(value, OSError)  # (None: its collecting)
            if unreached and address in self._runners:
                self._failed.add(address)
            if call is not None and self._of.get(call) == address:
                del self._of[call]
                self._runners[address].calls.discard(call)
                back.append((call, value))
        return back

    def lost(self) -> list[int]:
        """The calls in flight on runners that are gone (their worker died or was declared
        dead, or a call could not reach them), which are dropped; each worker without a
        runner gets one. Looks at most every :data:`LOOK_EVERY` seconds, unless a runner
        could not be reached since the last look."""
        if not self._failed and time.monotonic() - self._looked < LOOK_EVERY:
            return []
        self._looked = time.monotonic()
        workers = self._workers()
        dropped: list[int] = []
        for address, runner in list(self._runners.items()):
            gone = address not in workers or runner.future.status != "finished"
            if gone or address in self._failed:
                log.warning("the site runner on %s was lost: its sites are sent again", address)
                dropped += runner.calls
                for call in runner.calls:
                    self._of.pop(call, None)  # (a late answer is nobody's)
                runner.future.release()
                del self._runners[address]
        self._failed.clear()
        for address in [a for a in self._starting if a not in workers]:
            self._starting.pop(address)[1].release()
        self._start({a: n for a, n in workers.items() if a not in self._runners})
        self._settle(wait=False)
        return dropped

    def _workers(self) -> dict[str, int]:
        """The cluster's workers now, and their threads (asked of the scheduler)."""
        return dict(self._client.nthreads())

    def _start(self, workers: dict[str, int]) -> None:
        """Start a runner on each of ``workers`` (address: threads) not starting one."""
        for address, threads in workers.items():
            if address not in self._starting:
                future = self._client.submit(
                    SiteRunner,
                    threads,
                    actor=True,
                    workers=[address],
                    allow_other_workers=False,
                    pure=False,  # a runner of its own, never one closed by a fleet before
                )
                self._starting[address] = (threads, future)

    def _settle(self, *, wait: bool) -> None:
        """Take the runners that started (all of them, waiting a little, when ``wait``);
        one that failed is tried again at a later look."""
        for address, (threads, future) in list(self._starting.items()):
            if not wait and future.status == "pending":
                continue
            del self._starting[address]
            try:
                actor = future.result(timeout=_START_TIMEOUT)
            except Exception as exc:  # its worker gone meanwhile: not this look
                log.warning("no site runner on %s (%s): tried again later", address, exc)
                future.release()
                continue
            self._runners[address] = runner = _Runner(address, threads, future, actor)
            self._client.loop.add_callback(self._collect, runner)

    def close(self) -> None:
        """Stop the runners: no site more starts; they are let go."""
        for runner in self._runners.values():
            with suppress(Exception):  # its worker gone: nothing to stop
                runner.actor.close().result(timeout=_CLOSE_TIMEOUT)
            runner.future.release()
        for _threads, future in self._starting.values():
            future.release()
        self._runners.clear()
        self._starting.clear()
