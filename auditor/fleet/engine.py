"""audit_fleet: many sites at once, on this machine or a Dask cluster, saved where the
history lives.

The unit of work and of distribution is a site, sent to the site runner of a worker
(:mod:`auditor.fleet.runners`: one Dask actor a worker, not a task a site). The
process that calls :func:`audit_fleet` owns the history: it reads each site's
:class:`Previous` when the site is sent off, and saves each returned bundle in one
transaction as it comes back; workers never open the database. Sites are sent as
slots free up (at most ``concurrency`` in flight), so memory grows with the sites in
flight, not with the fleet.

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
abandoned (``hung``). A site whose worker dies (or is declared dead) is sent again,
up to Dask's ``allowed-failures`` times, then fails as ``worker-lost``. Nothing of a
failed site is saved. When the caller stops (Ctrl-C, SIGTERM, closing the generator),
the runners start no site more and what is in flight is never saved; what was saved
stays. When the Dask scheduler is lost (its process killed, its machine gone), nothing
more can be sent or collected: the fleet raises :class:`~auditor.errors.FleetStopped`
at its next look (within about :data:`_POLL` seconds), every run saved before it
stays, and what was in flight or never sent is left for a resumed fleet or
``reverify``.

Touches: the network, the database.
"""

from __future__ import annotations

import logging
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
from auditor.fleet.work import GateLoss, SiteTask, fleet_lease

if TYPE_CHECKING:
    from distributed import Client, Future

    from auditor.fleet.cluster import FleetGate
    from auditor.fleet.runners import Runners
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
    deaths: int = 0  # workers that died (or were declared dead) while it ran


@dataclass
class _Fleet:
    """The owner's book of a running fleet."""

    total: int
    slots: int
    started: float = field(default_factory=time.monotonic)
    running: dict[int, _Sent] = field(default_factory=dict)  # by the runner's call
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
        self._next: _Sent | None = next(self._rest, None)  # the crawl list's next site

    def __bool__(self) -> bool:
        """True while a site is left to send."""
        return bool(self._again) or self._next is not None

    def send_again(self, sent: _Sent, *, died: bool = False) -> None:
        """``sent`` once more, first; ``died``: its worker died, else its table was lost."""
        if died:
            self._again.append(replace(sent, deaths=sent.deaths + 1))
        else:
            self._again.append(replace(sent, resends=sent.resends + 1))

    def take(self, count: int) -> Iterator[_Sent]:
        for _ in range(max(count, 0)):
            if self._again:
                yield self._again.popleft()
            elif self._next is None:
                return
            else:
                item, self._next = self._next, next(self._rest, None)
                yield item

    def all(self) -> Iterator[_Sent]:
        yield from self.take(len(self._again))
        while self._next is not None:
            yield from self.take(1)


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
    from auditor.fleet.runners import Runners

    slots = max(1, min(concurrency or worker_threads(client), worker_threads(client)))
    fleet = _Fleet(len(found), slots)
    tell = on_progress or (lambda _progress: None)
    gate = FleetGate(client, options.sample.delay, fleet_lease(options), timeout=GATE_CALL_TIMEOUT)
    waiting = _Waiting(found)
    runners: Runners | None = None
    try:
        runners = Runners(client)
        while True:
            _scheduler_alive(client, fleet)
            given_up = gate.lost() and not _started_again(gate)
            if given_up:  # nothing more is sent: what is left fails, saying why
                for sent in waiting.all():
                    fleet.done, fleet.failed = fleet.done + 1, fleet.failed + 1
                    yield _table_lost(sent.site, gate.restarts)
            room = min(fleet.slots - len(fleet.running), runners.free())
            going = list(waiting.take(0 if given_up else room))
            tasks = [_task(history, options, sent, site_timeout) for sent in going]
            for call, sent in zip(runners.send(tasks, gate.ref), going, strict=True):
                fleet.running[call] = replace(sent, at=time.monotonic())
                fleet.sent += sent.resends == 0 and sent.deaths == 0
            fleet.count_pages(gate.alive)
            tell(fleet.progress())
            if not fleet.running and not waiting:
                return
            for sent, outcome in _finished(fleet, client, site_timeout, runners):
                if isinstance(outcome, _WorkerDied):
                    if sent.deaths < _allowed_failures():
                        waiting.send_again(sent, died=True)
                        continue
                    outcome = SiteFailure(sent.site, "worker-lost", outcome.detail)
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
        if runners is not None and cancel and _talking(client):
            runners.close()  # (what runs finishes on its worker, unsaved)
        gate.release()


def _task(history: History, options: AuditOptions, sent: _Sent, site_timeout: float) -> SiteTask:
    """What a worker needs to audit ``sent``: its previous run read from the history now."""
    options = with_proxy(options, sent.proxy)
    return SiteTask(sent.site, sent.target, previous_of(history, sent.site), options, site_timeout)


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


@dataclass(frozen=True)
class _WorkerDied:
    """A site's worker died, or was declared dead, while it ran: sent again, up to
    Dask's ``allowed-failures`` times (then it fails as ``worker-lost``)."""

    detail: str


def _allowed_failures() -> int:
    """Workers a site may see die under it before it fails (Dask's own setting)."""
    import dask

    return int(dask.config.get("distributed.scheduler.allowed-failures", 3))


def _finished(
    fleet: _Fleet, client: Client, site_timeout: float, runners: Runners
) -> list[tuple[_Sent, AuditBundle | SiteFailure | GateLoss | _WorkerDied]]:
    """Wait a little for sites to finish; what finished, lost its worker, or was given
    up as hung."""
    answered = [(c, v) for c, v in runners.answers(_POLL) if c in fleet.running]
    _scheduler_alive(client, fleet)  # its calls failed: not the sites' failure
    outcomes: list[tuple[_Sent, AuditBundle | SiteFailure | GateLoss | _WorkerDied]] = []
    for call, value in answered:
        sent = fleet.running.pop(call)
        outcomes.append((sent, _outcome(sent.site, value)))
    for call in runners.lost():  # (at once when a runner could not be reached)
        if call in fleet.running:
            sent = fleet.running.pop(call)
            outcomes.append((sent, _WorkerDied(f"its workers kept dying ({sent.deaths + 1})")))
    now = time.monotonic()
    for call, sent in list(fleet.running.items()):
        if now - sent.at > site_timeout + HUNG_GRACE:
            del fleet.running[call]
            detail = f"no answer from its worker {now - sent.at:.0f} s after it was sent"
            outcomes.append((sent, SiteFailure(sent.site, "hung", detail)))
    return outcomes


def _outcome(site: str, value: object) -> AuditBundle | SiteFailure | GateLoss | _WorkerDied:
    """What a runner's answer brought back: the site's value, or why there is none."""
    if isinstance(value, (AuditBundle, SiteFailure, GateLoss)):
        return value
    if isinstance(value, OSError):  # the worker could not be reached: it died under it
        return _WorkerDied(f"its workers kept dying: {type(value).__name__}: {value}")
    if isinstance(value, BaseException):
        return SiteFailure(site, "error", f"{type(value).__name__}: {value}")
    return SiteFailure(site, "error", f"the worker returned {type(value).__name__}")
