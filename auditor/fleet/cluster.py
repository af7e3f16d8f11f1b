"""Dask glue: the local cluster, the host table as an actor, and a worker's view of it.

The one module of auditor that imports ``distributed`` (with
:mod:`auditor.fleet.security`, for TLS). A fleet without
``--cluster`` starts a :class:`distributed.LocalCluster` of worker *processes*
here, one per core, so the CPU-heavy stages (a large walk, page parsing) of
different sites run on different cores; the fleet then runs exactly as it would
on a remote cluster.

Touches: the network.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.fleet.channel import Line, RemoteTable, TableServer, thread_table
from auditor.fleet.gate import GateLost, HostTable

if TYPE_CHECKING:
    import psutil
    from distributed import Client, Future, LocalCluster

__all__ = [
    "CLOSE_TIMEOUT",
    "GATE_CALL_TIMEOUT",
    "LOCAL_WORKER_CONFIG",
    "WORKER_PRELOAD",
    "ActorTable",
    "FleetGate",
    "GateRef",
    "TableHost",
    "close_local",
    "local_client",
    "start_gate",
    "worker_threads",
]

log = logging.getLogger(__name__)

#: Seconds a call to the fleet's host table may take before the site gives up
#: (:class:`GateLost`). A call takes milliseconds; a table whose worker died never
#: answers (Dask would try to connect for its whole connect timeout).
GATE_CALL_TIMEOUT = 20.0
#: Dask settings of the local cluster (its scheduler, nannies and workers). Dask's
#: statistical profiler walks the stack of every thread of a worker 100 times a second; a
#: fleet's workers hold dozens of threads, mostly asleep between polite requests: about a
#: tenth of their CPU, spent on a profile nobody reads. Each Dask server also wakes its
#: event loop every 20 ms to time it (for a warning past 3 s and the dashboard), looks at
#: its process's CPU, memory and network every 0.5 s (the dashboard's), and a nanny and
#: its worker look at the worker's memory every 0.1 s (to pause it at 80% of its limit,
#: kill it at 95%): 65 ms of CPU a second for an idle cluster of two workers (measured),
#: 6 ms a site at 300 sites 64 in flight, whose fleet lasts 30 s. Once a second, every
#: two seconds and twice a second: 16 ms a second idle. The memory look is the only one
#: that guards anything: a worker growing fast is paused or killed up to 0.4 s later.
LOCAL_WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "500ms",
}
#: The local workers' preload: their garbage collector settled as they start.
WORKER_PRELOAD = "auditor.fleet.heap"
#: Seconds the local cluster's client and cluster have to close once the fleet is over;
#: past them (and :data:`CLOSE_GRACE`), its worker processes are killed.
CLOSE_TIMEOUT = 30.0
#: Seconds the close may run past its own timeout before the workers are killed.
CLOSE_GRACE = 5.0


@contextmanager
def local_client(concurrency: int, *, close_timeout: float = CLOSE_TIMEOUT) -> Iterator[Client]:
    """A client of a new local cluster on 127.0.0.1: one worker process per core (no
    more than ``concurrency``), threads enough for ``concurrency`` sites, each forked
    with its imports done (:mod:`auditor.fleet.forkserver`); closed after, within about
    ``close_timeout`` seconds (then its workers are killed: :func:`close_local`)."""
    import dask
    from distributed import Client, LocalCluster

    from auditor.fleet.forkserver import METHOD, ctrl_c_ignored, start_worker_server

    start_worker_server()  # (started already, if the command knew a fleet was coming)
    workers = max(1, min(os.cpu_count() or 1, concurrency))
    # forked from the server for the cluster's life: a worker started again is too
    with dask.config.set({"distributed.worker.multiprocessing-method": METHOD}):
        with ctrl_c_ignored(), dask.config.set(LOCAL_WORKER_CONFIG):
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=math.ceil(concurrency / workers),
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # a free port: 8787 may be another's
                silence_logs=logging.CRITICAL,
                env=dict(os.environ),  # as it is now, not as the server's start saw it
                preload=[WORKER_PRELOAD],  # its collector settled (auditor.fleet.heap)
            )
        start_worker_server()  # Dask set its own preload list: ours, if it starts again
        client: Client | None = None
        try:
            client = Client(cluster)
            yield client
        finally:
            close_local(client, cluster, close_timeout)


def close_local(
    client: Client | None, cluster: LocalCluster, timeout: float = CLOSE_TIMEOUT
) -> None:
    """Close ``client`` and its local ``cluster`` within about ``timeout`` seconds; past
    it, or if the close failed, kill what is left of the worker processes (SIGKILL: a
    stopped or wedged worker too), saying so, so that the command always ends.

    The close runs in a thread of its own and is waited for, bounded: a close can hang
    for good (a Ctrl-C landing inside a lock the IO loop then waits on; a worker that
    never answers), and a daemon thread left hanging does not keep the process alive.
    """
    workers = _processes_of(cluster)
    failed: list[str] = []  # what failed to close, as the closing thread found
    closing = threading.Thread(
        target=_close,
        args=(client, cluster, timeout, failed),
        name="local-cluster-close",
        daemon=True,
    )
    closing.start()
    try:
        closing.join(timeout + CLOSE_GRACE)
    finally:  # a second Ctrl-C while waiting: kill the workers all the same
        hung = closing.is_alive()
        left = _still_running(workers, 0.0 if hung else CLOSE_GRACE)
        if hung or left:
            why = "still closing" if hung else f"{' and '.join(failed) or 'workers left'}"
            log.warning(
                "the local Dask cluster did not close within %g s (%s): killed its %d worker "
                "processes",
                timeout,
                why,
                len(left),
            )
            _kill(left)


def _close(client: Client | None, cluster: LocalCluster, timeout: float, failed: list[str]) -> None:
    """Close the client, then the cluster, each within half of ``timeout``; a failure is
    logged and added to ``failed`` (what it left behind is killed)."""
    for name, part in (("client", client), ("cluster", cluster)):
        if part is None:
            continue
        try:
            part.close(timeout=timeout / 2)
        except BaseException as exc:  # the thread's end: say it; what is left is killed
            failed.append(f"the {name}'s close failed")
            log.warning("closing the local Dask %s failed: %s: %s", name, type(exc).__name__, exc)


def _processes_of(cluster: LocalCluster) -> list[psutil.Process]:
    """The cluster's worker processes (those its nannies started), as they are now."""
    import psutil  # distributed's own dependency, for the same purpose

    found = []
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(nanny, "pid", None)
        if isinstance(pid, int):
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(pid))
    return found


def _still_running(processes: list[psutil.Process], within: float) -> list[psutil.Process]:
    """Those of ``processes`` still running after ``within`` seconds (the same
    processes: psutil checks that a pid was not taken by another; a zombie is over)."""
    import psutil

    ends = time.monotonic() + within
    while True:
        left = []
        for process in processes:
            with contextlib.suppress(psutil.Error):
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    left.append(process)
        if not left or time.monotonic() >= ends:
            return left
        time.sleep(0.1)


def _kill(processes: list[psutil.Process]) -> None:
    """SIGKILL ``processes`` and their children (left for multiprocessing to reap, as it
    does its children at exit)."""
    import psutil

    doomed = list(processes)
    for process in processes:
        with contextlib.suppress(psutil.Error):
            doomed += process.children(recursive=True)
    for process in doomed:
        with contextlib.suppress(psutil.Error):
            process.kill()


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
    line: Line | None = None  # the table's own socket, when it has one

    def table(self) -> RemoteTable:
        """The table, as seen from a task on any worker: over its socket, or through the
        actor when this worker cannot reach the socket (remembered for the process)."""
        if self.line is not None and self.line not in _UNREACHABLE:
            try:
                return thread_table(self.line, self.timeout, _tls_to(self.line))
            except OSError as exc:
                _UNREACHABLE.add(self.line)
                log.warning(
                    "the host table's socket %s:%d cannot be reached (%s): calls go "
                    "through the Dask actor",
                    self.line.host,
                    self.line.port,
                    exc,
                )
        from distributed.actor import Actor

        return ActorTable(Actor(TableHost, self.address, self.key), self.timeout)


#: Table sockets this worker process could not reach: it uses their actors.
_UNREACHABLE: set[Line] = set()


def _tls_to(line: Line) -> ssl.SSLContext | None:
    """This worker's own TLS context, for a TLS line (None for a plain one)."""
    from auditor.fleet.security import connect_context

    return connect_context() if line.tls else None


def start_gate(
    client: Client, delay: float, *, quiet: float = 0.0, timeout: float = GATE_CALL_TIMEOUT
) -> tuple[GateRef, Future[Any]]:
    """Start the fleet's host table as an actor; its reference, and the future that
    keeps it alive (hold it for as long as the fleet runs)."""
    future = client.submit(TableHost, delay, quiet=quiet, actor=True, pure=False)
    actor: Any = future.result()  # a proxy: its methods return futures
    line = actor.line().result(timeout=timeout)
    (address,) = client.who_has([future])[future.key]
    return GateRef(address, str(future.key), timeout, line), future


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
        """Close the table's socket and let it go (the fleet is over)."""
        with contextlib.suppress(Exception):  # its worker gone: nothing left to close
            self._alive.result(timeout=self._timeout).close().result(timeout=self._timeout)
        self._alive.release()


class ActorTable(RemoteTable):
    """The table through Dask's actor calls; a call not answered within ``timeout`` (the
    actor's worker died) raises :class:`GateLost`."""

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


class TableHost(HostTable):
    """The fleet's host table as a Dask actor, also served on a socket of its own
    (:mod:`auditor.fleet.channel`) on its worker's interface, when the worker talks TCP
    (a plain socket) or TLS (a TLS socket, with the worker's certificates)."""

    def __init__(self, delay: float, *, quiet: float = 0.0) -> None:
        super().__init__(delay, quiet=quiet)
        self._server = _table_server(self)

    def line(self) -> Line | None:
        """Where the table's socket listens, and its key (None: no socket)."""
        return None if self._server is None else self._server.line

    def close(self) -> None:
        """Close the socket (the fleet is over; the actor is let go next)."""
        if self._server is not None:
            self._server.close()


def _table_server(table: HostTable) -> TableServer | None:
    """The table's socket on the current Dask worker's host (an IP address): plain for a
    TCP worker, TLS with its own certificates for a TLS one; none for other protocols,
    nor for a TLS worker without a certificate (calls then go through the actor: never
    in clear on a TLS cluster)."""
    from distributed import get_worker
    from distributed.comm.addressing import get_address_host, parse_address

    from auditor.fleet.security import listen_context

    worker = get_worker()
    protocol, _ = parse_address(worker.address)
    host = get_address_host(worker.address)
    if protocol == "tcp":
        return TableServer(table, host)
    if protocol == "tls":
        context = listen_context(worker)
        return None if context is None else TableServer(table, host, context)
    return None
