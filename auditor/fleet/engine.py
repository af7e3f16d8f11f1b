"""audit_fleet: many sites at once, on this machine or a Dask cluster, saved where the
history lives.

The unit of work and of distribution is a site. The process that calls
:func:`audit_fleet` owns the history: it reads each site's :class:`Previous` when
the site is sent off, and saves each returned bundle in one transaction as it
comes back; workers never open the database. Sites are sent as slots free up (at
most ``concurrency`` in flight), so memory grows with the sites in flight, not
with the fleet.

Without a Dask ``client``, a local cluster of worker processes (one per core) is
started for the fleet and closed after it: the same code as on a cluster.

Concurrency. An audit mostly waits: 50 pages at ``--delay 1`` is about a minute
of politeness for well under a second of CPU. Sites in flight are what turns
waiting into throughput, until the CPU or memory runs out. The default,
:data:`SITES_PER_CORE` per core (32 on 2 cores), keeps a core busy about a
quarter of the time at the default delay (32 sites × ~0.8 s of CPU per ~60 s
audit ≈ 0.4 core for 2), leaving room for the large walk that comes along, and
holds at most 32 inventories in memory (a few MB each for most sites). On a
cluster the default is the workers' threads: start workers with as many threads
as sites they should hold (``dask worker ADDRESS --nthreads 32``).

Failure and interruption. A site that raises, or overruns its wall-clock bound
(``site_timeout``, kept by the worker at each request), comes back as a
:class:`SiteFailure`; a worker that gives no answer long after the bound is
abandoned (``hung``). Nothing of a failed site is saved. When the caller stops
(Ctrl-C, SIGTERM, closing the generator), what is in flight is cancelled and never
saved; what was saved stays. When the Dask scheduler is lost (its process killed, its
machine gone), nothing more can be sent or collected: the fleet raises
:class:`~auditor.errors.FleetStopped` at its next look (within about
:data:`_POLL` seconds), every run saved before it stays, and what was in flight or never
sent is left for a resumed fleet or ``reverify``.

Touches: the network, the database.
"""

from __future__ import annotations

import logging
import queue
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from auditor.audit import AuditBundle, AuditOptions, previous_of, save_audit
from auditor.errors import FleetStopped
from auditor.fleet.defaults import (
    DEFAULT_SITE_TIMEOUT,
    HUNG_GRACE,
    SITES_PER_CORE,
    default_concurrency,
)
from auditor.fleet.outcome import FleetProgress, SiteFailure
from auditor.fleet.sites import CrawlList, crawl_list
from auditor.fleet.work import GateLoss, SiteTask, audit_task, fleet_lease

if TYPE_CHECKING:
    from distributed import Client, Future

    from auditor.fleet.cluster import FleetGate, GateRef
    from auditor.history import History
    from auditor.scorer.result import AuditResult

__all__ = [
    "DEFAULT_SITE_TIMEOUT",
    "HUNG_GRACE",
    "SITES_PER_CORE",
    "audit_fleet",
    "default_concurrency",
]

_POLL = 2.0  # seconds between looks at the running sites (progress, the hung)
_COUNT_EVERY = 1.0  # seconds between looks at the host table's count of pages fetched
#: Times a fleet's host table is started again after its worker died; lost once more,
#: the fleet's remaining sites fail (a cluster that keeps losing workers).
MAX_GATE_RESTARTS = 3
#: Times a site is sent again after the host table was lost while it ran.
MAX_SITE_RESENDS = 2
_SCATTER_FROM = 20_000  # previous URLs from which a task is scattered ahead

ProgressCallback = Callable[[FleetProgress], None]
log = logging.getLogger(__name__)


def audit_fleet(
    sites: Iterable[str] | CrawlList,
    history: History,
    options: AuditOptions | None = None,
    *,
    concurrency: int | None = None,
    client: Client | None = None,
    site_timeout: float = DEFAULT_SITE_TIMEOUT,
    on_progress: ProgressCallback | None = None,
    fleet: int | None = None,
) -> Generator[AuditResult | SiteFailure, None, None]:
    """Audit every site, ``concurrency`` at a time, yielding each saved result (or why a
    site has none) as it finishes.

    ``sites`` are targets as ``auditor audit`` takes them (each site once, see
    :func:`~auditor.fleet.sites.crawl_list`). With ``client`` (a
    :class:`distributed.Client`) the sites run on its cluster; without, on a local
    cluster started for the fleet. Close the generator to stop early: sites in
    flight are then dropped, unsaved. ``fleet``: the id of the fleet's plan in the
    history (:meth:`~auditor.history.History.plan_fleet`); each run saved is marked as
    its site's in it. :class:`~auditor.errors.FleetStopped` when the cluster's scheduler
    is lost.
    """
    found = sites if isinstance(sites, CrawlList) else crawl_list(sites)
    options = options or AuditOptions()
    if client is not None:
        yield from _run(
            found, history, options, client, concurrency, site_timeout, on_progress, plan=fleet
        )
        return
    from auditor.fleet.cluster import local_client

    wanted = min(concurrency or default_concurrency(), max(len(found), 1))
    with local_client(wanted) as local:
        # (closing the local cluster ends what is in flight: nothing to cancel first)
        yield from _run(
            found,
            history,
            options,
            local,
            wanted,
            site_timeout,
            on_progress,
            cancel=False,
            plan=fleet,
        )


@dataclass(frozen=True)
class _Sent:
    """A site sent to the cluster: when, and how many times already."""

    site: str
    target: str
    proxy: str | None = None  # the crawl list's proxy for the site (None: the fleet's)
    at: float = 0.0
    resends: int = 0  # times sent again after its host table was lost


@dataclass
class _Fleet:
    """The owner's book of a running fleet."""

    total: int
    slots: int
    started: float = field(default_factory=time.monotonic)
    running: dict[Future[Any], _Sent] = field(default_factory=dict)
    done: int = 0
    failed: int = 0
    sent: int = 0  # sites sent at least once
    pages: int = 0  # pages fetched, as the host table last said
    pages_before: int = 0  # counted by host tables lost before the current one
    table: Any = None  # the host table the count was last read from
    counted_at: float = -_COUNT_EVERY

    def progress(self) -> FleetProgress:
        return FleetProgress(
            self.total,
            self.done,
            self.failed,
            len(self.running),
            self.slots,
            time.monotonic() - self.started,
            self.pages,
            self.sent,
        )

    def count_pages(self, table: Future[Any]) -> None:
        """Look up the pages fetched in the host ``table`` (the actor's future): at most
        every :data:`_COUNT_EVERY` seconds while sites run, and once none is left, so the
        last count is the whole fleet's. The count is only shown: if the table cannot
        say, the last count stands."""
        now = time.monotonic()
        if self.running and now - self.counted_at < _COUNT_EVERY:
            return
        self.counted_at = now
        if table is not self.table:  # a table started again counts from 0: add what was read
            self.table, self.pages_before = table, self.pages
        with suppress(Exception):  # the actor's worker lost, a timeout: keep the last count
            count = int(table.result(timeout=_POLL).pages_fetched().result(timeout=_POLL))
            self.pages = self.pages_before + count


class _Waiting:
    """The sites not sent yet: those to send again first, then the crawl list's rest."""

    def __init__(self, found: CrawlList) -> None:
        self._again: deque[_Sent] = deque()
        self._rest = (
            _Sent(s, t, found.proxy_of(i))
            for i, (s, t) in enumerate(zip(found.sites, found.targets, strict=True))
        )

    def send_again(self, sent: _Sent) -> None:
        self._again.append(replace(sent, resends=sent.resends + 1))

    def take(self, count: int) -> Iterator[_Sent]:
        for _ in range(max(count, 0)):
            item = self._again.popleft() if self._again else next(self._rest, None)
            if item is None:
                return
            yield item

    def all(self) -> Iterator[_Sent]:
        yield from self.take(len(self._again))
        yield from self._rest


class _Arrivals:
    """The sites' futures as they finish, handed over by Dask's done-callbacks.

    Waiting on every running future at each look (``distributed.wait``) made a task of
    each and left them waiting: a finished site cost the owner work for every site
    still in flight, 16 ms of CPU at 256 in flight (``tests/benchmarks``). A callback
    a future costs the same whatever else runs."""

    def __init__(self) -> None:
        self._finished: queue.SimpleQueue[Future[Any]] = queue.SimpleQueue()

    def watch(self, future: Future[Any]) -> None:
        """Hand ``future`` over once it finished, failed or was cancelled."""
        future.add_done_callback(self._finished.put)

    def take(self, timeout: float) -> list[Future[Any]]:
        """The futures finished since the last look, waiting up to ``timeout`` for one."""
        try:
            taken = [self._finished.get(timeout=timeout)]
        except queue.Empty:
            return []
        with suppress(queue.Empty):
            while True:
                taken.append(self._finished.get_nowait())
        return taken


def _run(
    found: CrawlList,
    history: History,
    options: AuditOptions,
    client: Client,
    concurrency: int | None,
    site_timeout: float,
    on_progress: ProgressCallback | None,
    *,
    cancel: bool = True,
    plan: int | None = None,
) -> Generator[AuditResult | SiteFailure, None, None]:
    from auditor.fleet.cluster import GATE_CALL_TIMEOUT, FleetGate, worker_threads

    slots = max(1, min(concurrency or worker_threads(client), worker_threads(client)))
    fleet = _Fleet(len(found), slots)
    tell = on_progress or (lambda _progress: None)
    gate = FleetGate(client, options.sample.delay, fleet_lease(options), timeout=GATE_CALL_TIMEOUT)
    waiting = _Waiting(found)
    arrivals = _Arrivals()
    try:
        while True:
            _scheduler_alive(client, fleet)
            given_up = gate.lost() and not _started_again(gate)
            if given_up:  # nothing more is sent: what is left fails, saying why
                for sent in waiting.all():
                    fleet.done, fleet.failed = fleet.done + 1, fleet.failed + 1
                    yield _table_lost(sent.site, gate.restarts)
            for sent in waiting.take(0 if given_up else fleet.slots - len(fleet.running)):
                task = SiteTask(
                    sent.site,
                    sent.target,
                    previous_of(history, sent.site),
                    with_proxy(options, sent.proxy),
                    site_timeout,
                )
                future = client.submit(run_on_worker, _shipped(client, task), gate.ref, pure=False)
                fleet.running[future] = replace(sent, at=time.monotonic())
                arrivals.watch(future)
                fleet.sent += sent.resends == 0
            fleet.count_pages(gate.alive)
            tell(fleet.progress())
            if not fleet.running:
                return
            for sent, outcome in _finished(fleet, client, site_timeout, arrivals):
                if isinstance(outcome, GateLoss):
                    if not given_up and sent.resends < MAX_SITE_RESENDS:
                        waiting.send_again(sent)  # nothing of it was kept: from the start
                        continue
                    outcome = _table_lost(sent.site, gate.restarts, outcome.detail)
                fleet.done += 1
                if isinstance(outcome, SiteFailure):
                    fleet.failed += 1
                    yield outcome
                else:
                    yield save_audit(history, outcome, fleet=plan)
    except Exception as exc:  # a scheduler lost mid-call surfaces as any of Dask's errors
        if _talking(client):
            raise
        raise _scheduler_lost(client, fleet) from exc
    finally:
        if fleet.running and cancel and _talking(client):
            client.cancel(list(fleet.running))
        gate.release()


def _talking(client: Client) -> bool:
    """True while the client is connected to its scheduler."""
    return str(client.status) == "running"


def _scheduler_alive(client: Client, fleet: _Fleet) -> None:
    """FleetStopped once the client lost its scheduler: nothing can be sent or collected."""
    if not _talking(client):
        raise _scheduler_lost(client, fleet)


def _scheduler_lost(client: Client, fleet: _Fleet) -> FleetStopped:
    address = getattr(getattr(client, "scheduler", None), "address", None) or "its address"
    return FleetStopped(
        f"lost the Dask scheduler ({address}): the fleet stopped; {len(fleet.running)} "
        "sites in flight were dropped (nothing of them saved), the runs saved before stay"
    )


def with_proxy(options: AuditOptions, proxy: str | None) -> AuditOptions:
    """``options`` with every request of the site through ``proxy`` (unchanged if None)."""
    if proxy is None:
        return options
    walk = replace(options.walk, http=replace(options.walk.http, proxy=proxy))
    sample = replace(options.sample, http=replace(options.sample.http, proxy=proxy))
    return replace(options, walk=walk, sample=sample)


def _started_again(gate: FleetGate) -> bool:
    """Start the fleet's lost host table again, unless it was lost too often already."""
    if gate.restarts >= MAX_GATE_RESTARTS:
        return False
    log.warning(
        "the fleet's host table was lost (the worker holding it died): started again, "
        "granting no turn for a lease and a delay"
    )
    gate.renew()
    return True


def _table_lost(site: str, restarts: int, detail: str = "") -> SiteFailure:
    why = f"the fleet's host table was lost (its worker died; started again {restarts} times)"
    return SiteFailure(site, "worker-lost", f"{why}: {detail}" if detail else why)


def run_on_worker(task: SiteTask, gate: GateRef) -> AuditBundle | SiteFailure | GateLoss:
    """The task a worker runs: one site behind the fleet's host table."""
    table = gate.table()
    try:
        return audit_task(task, table)
    finally:
        table.site_over()


def _shipped(client: Client, task: SiteTask) -> SiteTask | Future[Any]:
    """The task itself, or, when it carries a large previous inventory, the task sent
    to the cluster ahead (Dask's advice for large arguments: no big graph to ship)."""
    entries = task.previous.entries
    if entries is None or len(entries) < _SCATTER_FROM:
        return task
    shipped: Future[Any] = client.scatter(task, hash=False)
    return shipped


def _finished(
    fleet: _Fleet, client: Client, site_timeout: float, arrivals: _Arrivals
) -> list[tuple[_Sent, AuditBundle | SiteFailure | GateLoss]]:
    """Wait a little for sites to finish; what finished (or was given up as hung)."""
    done = [future for future in arrivals.take(_POLL) if future in fleet.running]
    _scheduler_alive(client, fleet)  # its futures were cancelled: not the sites' failure
    values = _gathered(client, done)
    outcomes: list[tuple[_Sent, AuditBundle | SiteFailure | GateLoss]] = []
    for future in done:
        sent = fleet.running.pop(future)
        outcomes.append((sent, _outcome(sent.site, future, values)))
    now = time.monotonic()
    for future, sent in list(fleet.running.items()):
        if now - sent.at > site_timeout + HUNG_GRACE:
            del fleet.running[future]
            future.cancel()
            detail = f"no answer from its worker {now - sent.at:.0f} s after it was sent"
            outcomes.append((sent, SiteFailure(sent.site, "hung", detail)))
    return outcomes


def _gathered(client: Client, done: list[Future[Any]]) -> dict[Future[Any], Any]:
    """The values of the futures of ``done`` that finished, fetched in one call; none
    when that call fails (each is then asked for alone, to learn why)."""
    finished = [future for future in done if future.status == "finished"]
    if not finished:
        return {}
    try:
        return dict(zip(finished, client.gather(finished), strict=True))
    except Exception:  # a value lost with its worker, the scheduler gone: one by one
        return {}


def _outcome(
    site: str, future: Any, values: dict[Future[Any], Any]
) -> AuditBundle | SiteFailure | GateLoss:
    """What a finished future brought back: its value, or why there is none."""
    from distributed import KilledWorker

    if future in values:
        return _expected(site, values[future])
    if future.status == "finished":
        return _expected(site, future.result())
    if future.status == "cancelled":
        return SiteFailure(site, "cancelled", "the cluster dropped the task")
    error = future.exception()
    if isinstance(error, KilledWorker):
        return SiteFailure(site, "worker-lost", f"its workers kept dying: {error}")
    return SiteFailure(site, "error", f"{type(error).__name__}: {error}")


def _expected(site: str, value: object) -> AuditBundle | SiteFailure | GateLoss:
    """``value`` when it is what a site's task returns; else a failure saying what it was."""
    if isinstance(value, (AuditBundle, SiteFailure, GateLoss)):
        return value
    return SiteFailure(site, "error", f"the worker returned {type(value).__name__}")
