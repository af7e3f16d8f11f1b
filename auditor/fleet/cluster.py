"""Dask glue: the local cluster, the host table as an actor, and a worker's view of it.

The one module of auditor that imports ``distributed``. A fleet without
``--cluster`` starts a :class:`distributed.LocalCluster` of worker *processes*
here, one per core, so the CPU-heavy stages (a large walk, page parsing) of
different sites run on different cores; the fleet then runs exactly as it would
on a remote cluster.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.fleet.gate import GateLost, HostTable

if TYPE_CHECKING:
    from distributed import Client, Future

__all__ = [
    "GATE_CALL_TIMEOUT",
    "LOCAL_WORKER_CONFIG",
    "ActorTable",
    "FleetGate",
    "GateRef",
    "local_client",
    "start_gate",
    "worker_threads",
]

#: Seconds a call to the fleet's host table may take before the site gives up
#: (:class:`GateLost`). A call takes milliseconds; a table whose worker died never
#: answers (Dask would try to connect for its whole connect timeout).
GATE_CALL_TIMEOUT = 20.0
#: Dask settings of the local cluster's workers. Dask's statistical profiler walks the
#: stack of every thread of a worker 100 times a second; a fleet's workers hold dozens
#: of threads, mostly asleep between polite requests: about a tenth of their CPU, spent
#: on a profile nobody reads.
LOCAL_WORKER_CONFIG = {"distributed.worker.profile.enabled": False}


@contextmanager
def local_client(concurrency: int) -> Iterator[Client]:
    """A client of a new local cluster on 127.0.0.1: one worker process per core (no
    more than ``concurrency``), threads enough for ``concurrency`` sites; closed after."""
    import dask
    from distributed import Client, LocalCluster

    workers = max(1, min(os.cpu_count() or 1, concurrency))
    with _workers_ignore_ctrl_c(), dask.config.set(LOCAL_WORKER_CONFIG):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=math.ceil(concurrency / workers),
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",  # a free port: 8787 may be taken (another cluster)
            silence_logs=logging.CRITICAL,
        )
    try:
        with Client(cluster) as client:
            yield client
    finally:
        cluster.close()


@contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Start worker processes with SIGINT ignored (they inherit it): Ctrl-C reaches the
    whole process group, and the fleet's owner alone should handle it, by stopping the
    fleet and closing the cluster, rather than every worker dying with a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def worker_threads(client: Client) -> int:
    """Threads across the cluster's workers: how many sites it can run at once."""
    return sum(client.nthreads().values())


@dataclass(frozen=True)
class GateRef:
    """A picklable reference to the fleet's host table living in a Dask actor.

    Tasks get this rather than the actor itself: an actor passed as an argument is
    a dependency, and Dask would run every task on the actor's worker.
    """

    address: str
    key: str
    timeout: float = GATE_CALL_TIMEOUT  # for each call, then GateLost

    def table(self) -> ActorTable:
        """The table, as seen from a task on any worker."""
        from distributed.actor import Actor

        return ActorTable(Actor(HostTable, self.address, self.key), self.timeout)


def start_gate(
    client: Client, delay: float, *, quiet: float = 0.0, timeout: float = GATE_CALL_TIMEOUT
) -> tuple[GateRef, Future[Any]]:
    """Start the fleet's host table as an actor; its reference, and the future that
    keeps it alive (hold it for as long as the fleet runs)."""
    future = client.submit(HostTable, delay, quiet=quiet, actor=True, pure=False)
    future.result()
    (address,) = client.who_has([future])[future.key]
    return GateRef(address, str(future.key), timeout), future


class FleetGate:
    """The fleet's host table, started again when the worker holding it dies.

    Why again rather than failing the fleet: Dask already sends the sites of a dead
    worker elsewhere; the table is the one piece of the fleet that would not survive,
    and a crawl list of thousands should not end with one worker. The new table is
    started quiet for ``lease`` and the delay (see :class:`HostTable`): no turn the
    lost one granted can still be running when it grants its first, so politeness
    holds across the change. What the lost table had learnt (Crawl-delays, back-offs)
    is learnt again: every site sent from then on reads its robots.txt afresh.
    """

    def __init__(
        self, client: Client, delay: float, lease: float, *, timeout: float = GATE_CALL_TIMEOUT
    ) -> None:
        self._client = client
        self._delay = delay
        self._quiet = lease + delay
        self._timeout = timeout
        self.restarts = 0
        self.ref, self._alive = start_gate(client, delay, timeout=timeout)

    @property
    def alive(self) -> Future[Any]:
        """The future that keeps the current table alive (the actor, for direct calls)."""
        return self._alive

    def lost(self) -> bool:
        """True once the worker holding the table is gone (its actor erred)."""
        return bool(self._alive.status != "finished")

    def renew(self) -> None:
        """Start a new, quiet table in place of the lost one."""
        self._alive.release()
        self.ref, self._alive = start_gate(
            self._client, self._delay, quiet=self._quiet, timeout=self._timeout
        )
        self.restarts += 1

    def release(self) -> None:
        """Let the table go (the fleet is over)."""
        self._alive.release()


class ActorTable:
    """A :class:`HostTable` in an actor, with the table's plain (blocking) methods; a
    call not answered within ``timeout`` (the actor's worker died) raises
    :class:`GateLost`."""

    def __init__(self, actor: Any, timeout: float = GATE_CALL_TIMEOUT) -> None:
        self._actor = actor
        self._timeout = timeout

    def _call(self, method: str, *args: object) -> Any:
        try:
            return getattr(self._actor, method)(*args).result(timeout=self._timeout)
        except Exception as exc:  # unreachable, dead, or no answer in time: all the same
            raise GateLost(
                f"the fleet's host table did not answer ({method}): {type(exc).__name__}: {exc}"
            ) from exc

    def ask(self, host: str, holder: str, lease: float) -> float:
        """See :meth:`HostTable.ask`."""
        return float(self._call("ask", host, holder, lease))

    def done(
        self,
        host: str,
        holder: str,
        status: int | None = None,
        retry_after: float | None = None,
        page: bool = False,
    ) -> None:
        """See :meth:`HostTable.done`."""
        self._call("done", host, holder, status, retry_after, page)

    def leave(self, host: str, holder: str) -> None:
        """See :meth:`HostTable.leave`."""
        self._call("leave", host, holder)

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """See :meth:`HostTable.honour_crawl_delay`."""
        self._call("honour_crawl_delay", host, crawl_delay)

    def delay_for(self, host: str) -> float:
        """See :meth:`HostTable.delay_for`."""
        return float(self._call("delay_for", host))

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """See :meth:`HostTable.slow_down`."""
        return float(self._call("slow_down", host, retry_after))
