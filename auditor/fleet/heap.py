"""The garbage collector of a process that runs a fleet: its imports frozen, its young
generation collected less often.

A fleet's worker holds what it imported (Dask, pandas, lxml, the audit: hundreds of
thousands of objects that live as long as the process) and, site after site, makes
short-lived containers by the million. With CPython's defaults, every 700 containers
made and not yet freed start a collection, and now and then a full one, which walks
every object the imports made: about 1 ms of a worker's CPU a site (a 300-site fleet,
``tests/benchmarks/bench_site_cpu.py --fleet``), the full collections over half of it.

So the process's long-lived objects are frozen (``gc.freeze``: moved where no
collection looks; they are never cyclic garbage, they live as long as the process),
and the young generation is collected every :data:`FLEET_THRESHOLDS`\\ ``[0]``
containers instead of 700. Cyclic garbage still goes, a little later: a young
collection costs what is then alive, and a site's containers are mostly freed by
reference counting before one starts. (What is cyclic garbage at the moment of the
freeze is kept for good: the moment is chosen where there is little, after imports.)

- A local cluster's workers (:func:`~auditor.fleet.cluster.local_client`) do it as
  Dask starts them: this module is their worker preload (:func:`dask_setup`).
- The command (``auditor audit`` on a crawl list) does it for the time of its fleet
  (:func:`collector_for_fleet`), where it also runs the Dask scheduler.
- A cluster given with ``--cluster`` is the operator's: its workers are not touched;
  ``dask worker --preload auditor.fleet.heap`` does it there (docs/fleets.md).

Touches: nothing.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FLEET_THRESHOLDS", "collector_for_fleet", "dask_setup", "settle_collector"]

#: ``gc.set_threshold`` in a fleet's processes: the young generation collected every
#: 50,000 containers made and not yet freed (CPython's default: 700); the older two as
#: by default.
FLEET_THRESHOLDS = (50_000, 10, 10)


def settle_collector() -> None:
    """Freeze what this process holds now and set :data:`FLEET_THRESHOLDS`, for the
    rest of the process (module docstring)."""
    gc.freeze()
    gc.set_threshold(*FLEET_THRESHOLDS)


def dask_setup(worker: object) -> None:
    """Dask's preload hook, run in each worker as it starts: what a worker imports before
    its first site (:data:`~auditor.fleet.forkserver.WORKER_MODULES`: a local worker has
    them from the process it was forked from; a worker of ``dask worker --preload`` pays
    them now rather than at its first site), then :func:`settle_collector`, so that they
    are frozen too."""
    from auditor.fleet.forkserver import WORKER_MODULES

    for name in WORKER_MODULES:
        importlib.import_module(name)
    settle_collector()


@contextmanager
def collector_for_fleet() -> Iterator[None]:
    """:func:`settle_collector` inside; after, the thresholds as they were and the frozen
    objects given back to the collector (unless some were frozen before: then they stay
    as they are, and this freezes nothing)."""
    thresholds = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    gc.set_threshold(*FLEET_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()
