"""The local cluster's worker processes, forked from one process that imported them once.

A Dask worker process started the usual way (``spawn``) is a new interpreter: it
imports Dask, then, with its first site, auditor's audit and everything under it
(pandas, lxml, extruct, requests): about a second of CPU each, before its first
request, paid again by every worker and by every worker started again. A fleet of 30
sites at ``--delay 0.2`` is over in about 5 s of politeness; those imports were half
its wall.

So the local cluster's workers are forked from Python's *forkserver* (one process,
started once for the command), which imports :data:`WORKER_MODULES` once, before any
worker is asked for: each worker starts with them already loaded, in memory pages it
shares with the server until it writes to them. :func:`start_worker_server` starts
that server, as early as the command knows it will run a local fleet, so its imports
overlap the command's own. A cluster given with ``--cluster`` is not touched: its
workers are the operator's.

The server is started with SIGINT ignored and inherits it, as do the workers it forks
(Ctrl-C is the fleet owner's to handle, as with spawned workers), and with Dask's
environment for new workers (``distributed.nanny.pre-spawn-environ``: one BLAS thread,
glibc's trim threshold; its hash seed), which a forked worker cannot be given any more.
It runs until the process that started it ends, with the environment of its start: a
worker is given the environment of its cluster's start on top (``env``), so a variable
set or changed since (a proxy) reaches it; one removed since stays.

Touches: nothing.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import forkserver

__all__ = ["METHOD", "WORKER_MODULES", "ctrl_c_ignored", "start_worker_server"]

#: Dask's ``distributed.worker.multiprocessing-method`` for the local cluster.
METHOD = "forkserver"
#: What a local worker imports before its first site, imported once by the server:
#: Dask's worker, the runner of the sites (auditor.fleet.runners and what it imports: the
#: audit, its parsers, pandas), the host table's glue.
WORKER_MODULES = ("distributed", "auditor.fleet.runners", "auditor.fleet.cluster")
#: Dask's own environment for the processes its nannies start, when its configuration
#: cannot be read (the values of its distributed.yaml).
_PRE_SPAWN_ENVIRON = {
    "MALLOC_TRIM_THRESHOLD_": "65536",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}
#: Dask's nannies' ``PYTHONHASHSEED`` for their workers when none is set.
_HASH_SEED = "6640"


def start_worker_server() -> None:
    """Start the process the local cluster's workers are forked from, importing
    :data:`WORKER_MODULES`, unless it runs already (this returns at once: the imports
    go on in that process). Call it as early as a local fleet is known to come."""
    multiprocessing.get_context(METHOD).set_forkserver_preload(list(WORKER_MODULES))
    with ctrl_c_ignored(), _environ({**_pre_spawn_environ(), **_search_path()}):
        forkserver.ensure_running()


def _search_path() -> dict[str, str]:
    """``PYTHONPATH`` with this process's module search path first: the server is a new
    interpreter in this process's current directory, and Python 3.11's forkserver drops
    the ``sys.path`` it is given, so a package found here through a directory that is
    not its (a checkout run from its root, then ``chdir``) would not be imported there,
    and every worker would import it again after all."""
    here = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    given = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*here, given] if given else here)}


def _pre_spawn_environ() -> dict[str, str]:
    """Dask's ``distributed.nanny.pre-spawn-environ``, as strings, with the hash seed
    its nannies give their workers when none is set (the same in every worker)."""
    try:
        import dask.config

        found = dask.config.get("distributed.nanny.pre-spawn-environ")
    except Exception:  # distributed's defaults not loaded (no distributed): its values
        found = None
    chosen = {str(name): str(value) for name, value in dict(found or _PRE_SPAWN_ENVIRON).items()}
    if os.environ.get("PYTHONHASHSEED", "0") == "0" and chosen.get("PYTHONHASHSEED", "0") == "0":
        chosen["PYTHONHASHSEED"] = _HASH_SEED
    return chosen


@contextmanager
def _environ(extra: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``extra`` set inside (for a process started there); as before
    after."""
    saved = {name: os.environ.get(name) for name in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def ctrl_c_ignored() -> Iterator[None]:
    """SIGINT ignored inside, so that a worker process started there inherits it:
    Ctrl-C reaches the whole process group, and the fleet's owner alone should handle it
    (stop the fleet, close the cluster) rather than every worker dying with a
    traceback. In the main thread only (signals can be set there only: elsewhere, as
    it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
