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

from auditor.fleet.gate import HostTable

if TYPE_CHECKING:
    from distributed import Client, Future

__all__ = ["ActorTable", "GateRef", "local_client", "start_gate", "worker_threads"]


@contextmanager
def local_client(concurrency: int) -> Iterator[Client]:
    """A client of a new local cluster on 127.0.0.1: one worker process per core (no
    more than ``concurrency``), threads enough for ``concurrency`` sites; closed after."""
    from distributed import Client, LocalCluster

    workers = max(1, min(os.cpu_count() or 1, concurrency))
    with _workers_ignore_ctrl_c():
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

    def table(self) -> ActorTable:
        """The table, as seen from a task on any worker."""
        from distributed.actor import Actor

        return ActorTable(Actor(HostTable, self.address, self.key))


def start_gate(client: Client, delay: float) -> tuple[GateRef, Future[Any]]:
    """Start the fleet's host table as an actor; its reference, and the future that
    keeps it alive (hold it for as long as the fleet runs)."""
    future = client.submit(HostTable, delay, actor=True, pure=False)
    future.result()
    (address,) = client.who_has([future])[future.key]
    return GateRef(address, str(future.key)), future


class ActorTable:
    """A :class:`HostTable` in an actor, with the table's plain (blocking) methods."""

    def __init__(self, actor: object) -> None:
        self._actor = actor

    def ask(self, host: str, holder: str, lease: float) -> float:
        """See :meth:`HostTable.ask`."""
        return float(self._actor.ask(host, holder, lease).result())  # type: ignore[attr-defined]

    def done(
        self,
        host: str,
        holder: str,
        status: int | None = None,
        retry_after: float | None = None,
        page: bool = False,
    ) -> None:
        """See :meth:`HostTable.done`."""
        self._actor.done(host, holder, status, retry_after, page).result()  # type: ignore[attr-defined]

    def leave(self, host: str, holder: str) -> None:
        """See :meth:`HostTable.leave`."""
        self._actor.leave(host, holder).result()  # type: ignore[attr-defined]

    def honour_crawl_delay(self, host: str, crawl_delay: float | None) -> None:
        """See :meth:`HostTable.honour_crawl_delay`."""
        self._actor.honour_crawl_delay(host, crawl_delay).result()  # type: ignore[attr-defined]

    def delay_for(self, host: str) -> float:
        """See :meth:`HostTable.delay_for`."""
        return float(self._actor.delay_for(host).result())  # type: ignore[attr-defined]

    def slow_down(self, host: str, retry_after: float | None) -> float:
        """See :meth:`HostTable.slow_down`."""
        return float(self._actor.slow_down(host, retry_after).result())  # type: ignore[attr-defined]
