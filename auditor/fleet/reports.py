"""A fleet's site reports, drawn beside the audits rather than in their way.

Drawing a site's report (five matplotlib PNGs and the HTML) takes about 0.1 s of
CPU in a process that drew one before (0.3 s the first): about what auditing a small
site costs its worker. So a fleet draws
only the reports it is asked for (``--reports``: by default the sites whose verdict
changed), and draws them beside the loop that collects the results rather than in
it: the history's owner reads each site's report data (a few quick queries: the
history stays in this process) and hands it to :class:`ReportWriter`'s pool of
processes, one per core, then goes on collecting. ``auditor report --all`` draws a
whole history's reports through the same pool.

The drawing processes run at a lower priority (``nice`` +10). The audits are paced
by politeness: a worker that waits for a core past its turn wastes the host's time,
while a report drawn a few seconds later costs nothing. So the audits take the CPU
they need and the reports take the rest, and at the end of the fleet the reports
still pending are drawn on every core. The pool starts with the first report: a
fleet that draws none pays nothing for it.

A small fleet (every site in flight at once) is the exception: its results come
together at its end, when no audit is left to make way for, and drawers at ``nice``
+10 would then wait behind whatever else the machine runs (on a shared machine, a
30-site fleet's 30 reports took 10 to 20 s so). Its pool draws at the fleet's own
priority (``niceness=0``), and is started at the fleet's start (:meth:`ReportWriter.start`),
its imports done while the sites wait out their politeness.

Memory stays bounded: at most ``backlog`` reports are pending (sent to the pool, not
drawn), holding at most ``backlog_rows`` inventory rows in all (one report at a time
when a single site has more). When a new one would pass either,
:meth:`ReportWriter.add` waits for reports to finish, so the fleet sends no new site
meanwhile (its generator is not asked for the next result): the audits slow down to
the pace of the reports rather than queueing data without end. A report that cannot
be drawn is logged and handed back without a path, never the fleet stopped.

The pool's processes do not hear Ctrl-C (it reaches the whole process group):
the owner alone handles it, and may still finish the few reports pending.

Touches: the database, the disk.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import resource_tracker
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auditor.fleet import FleetProgress
    from auditor.history import History
    from auditor.report import ReportData

__all__ = [
    "BACKLOG",
    "BACKLOG_ROWS",
    "DRAWING_NICENESS",
    "DrawnReport",
    "ReportWriter",
    "draw_report",
    "reports_coming",
    "started_with_first_sent",
]

log = logging.getLogger(__name__)

#: Reports pending (sent to the pool, not drawn yet), at most: a small site's report
#: data is a few kB, and this many keep the drawers busy through a burst of results.
BACKLOG = 256
#: Inventory rows the pending reports' data may hold in all (about 100 MB), at most.
BACKLOG_ROWS = 1_000_000
#: How much lower the drawing processes' priority is than the audits' (``nice``).
DRAWING_NICENESS = 10


def draw_report(data: ReportData, folder: str) -> str:
    """Draw one site's report into ``folder`` (in a pool process); its HTML path."""
    from auditor.report import write_site_report

    return str(write_site_report(data, Path(folder)))


@dataclass(frozen=True)
class DrawnReport:
    """A site's report, drawn: its HTML file, or None when it could not be (logged)."""

    site: str
    path: str | None


class ReportWriter:
    """Writes the reports of the sites it is given under ``out``, in a pool of processes.

    :meth:`add` takes a site whose latest run is saved; :meth:`take` hands back the
    reports drawn since (:class:`DrawnReport`) and forgets them; :meth:`drain` waits
    for the rest. ``niceness``: how much lower the pool's priority is than this
    process's (0: the same).
    """

    def __init__(
        self,
        history: History,
        out: Path,
        *,
        processes: int | None = None,
        backlog: int = BACKLOG,
        backlog_rows: int = BACKLOG_ROWS,
        draw: Callable[[ReportData, str], str] = draw_report,
        niceness: int = DRAWING_NICENESS,
    ) -> None:
        self.history = history
        self.out = out
        self.processes = max(1, processes or os.cpu_count() or 1)
        self.backlog = max(1, backlog)
        self.backlog_rows = backlog_rows
        self.draw = draw  # run in the pool: a module-level function
        self.niceness = niceness  # added to the pool processes' own
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[Future[str], tuple[str, int]] = {}  # site, rows; as sent
        self._queued: deque[str] = deque()  # not sent yet (an add interrupted)
        self.written = 0  #: reports handed back by :meth:`take` with their file written

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start the pool's processes, their imports and charts now (they take seconds),
        for a caller that knows it will draw many reports; else the pool starts with the
        first."""
        with _children_deaf_to_ctrl_c():
            for _ in range(self.processes):
                self._executor().submit(_warm)

    @property
    def drawing(self) -> int:
        """Reports sent to the pool and not drawn yet."""
        return sum(1 for future in self._pending if not future.done())

    @property
    def drawing_rows(self) -> int:
        """Inventory rows in the data of the reports not drawn yet."""
        return sum(rows for future, (_, rows) in self._pending.items() if not future.done())

    def add(self, site: str) -> None:
        """Send ``site``'s report (of its latest run) to be drawn; first wait, while
        ``backlog`` reports or ``backlog_rows`` rows are pending, for reports to finish."""
        self._queued.append(site)
        self._send()

    def take(self) -> list[DrawnReport]:
        """The reports finished since the last call, in the order they were added."""
        done = [f for f in self._pending if f.done()]
        drawn = [_drawn(self._pending.pop(future)[0], future) for future in done]
        self.written += sum(1 for report in drawn if report.path is not None)
        return drawn

    def drain(self, queued: bool = True) -> None:
        """Wait until every report added is drawn (then :meth:`take` them). With
        ``queued=False`` (the history is unreachable), the reports whose data was not read
        yet are dropped instead of read: only those already sent are waited for."""
        if queued:
            self._send()
        else:
            self._queued.clear()
        wait(list(self._pending))

    def close(self) -> None:
        """Stop the pool; reports not drawn yet are dropped."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._pending.clear()
        self._queued.clear()

    def _send(self) -> None:
        from auditor.report import load_report_data

        while self._queued:
            data = load_report_data(self.history, self._queued[0])
            rows = 0 if data.entries is None else len(data.entries)
            while self._full(rows):
                busy = [f for f in self._pending if not f.done()]
                wait(busy, return_when=FIRST_COMPLETED)
            self._submit(self._queued[0], data, rows)
            self._queued.popleft()

    def _full(self, rows: int) -> bool:
        """Whether a report of ``rows`` must wait (never when nothing else is pending)."""
        drawing = self.drawing
        if drawing == 0:
            return False
        return drawing >= self.backlog or self.drawing_rows + rows > self.backlog_rows

    def _submit(self, site: str, data: ReportData, rows: int) -> None:
        from auditor.report import site_slug

        folder = str(self.out / site_slug(site))
        with _children_deaf_to_ctrl_c():  # a pool process may be started here
            try:
                future = self._executor().submit(self.draw, data, folder)
            except BrokenProcessPool:  # a drawing process died: a new pool
                self._pool = None
                future = self._executor().submit(self.draw, data, folder)
        self._pending[future] = (site, rows)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")  # the owner has threads: no fork
            self._pool = ProcessPoolExecutor(
                self.processes,
                mp_context=spawn,
                initializer=_drawer_started,
                initargs=(self.niceness,),
            )
        return self._pool


def reports_coming(policy: str, sites: Iterable[str], history: History) -> bool:
    """Whether a fleet of ``sites`` will draw reports under ``--reports policy``:
    ``all``, or ``changed`` with a site never audited (a first audit's verdict is new).
    A query a site: for a small fleet, before it starts."""
    if policy == "none":
        return False
    return policy == "all" or any(history.latest_run(site) is None for site in sites)


def started_with_first_sent(
    reports: ReportWriter, show: Callable[[FleetProgress], None]
) -> Callable[[FleetProgress], None]:
    """``show`` (a fleet's ``on_progress``), that also starts ``reports``' pool once the
    fleet's first sites are sent: the pool's imports (seconds) then overlap the sites'
    politeness, neither the cluster's start nor, after the last site, the drawing."""
    started = False

    def shown(progress: FleetProgress) -> None:
        nonlocal started
        show(progress)
        if not started and progress.sent:
            started = True
            reports.start()

    return shown


def _drawer_started(niceness: int) -> None:
    """A drawing process's start: its priority lowered, and its end made quick.

    A spawned process ends as an interpreter does: it collects and tears down all that
    matplotlib, pandas and the charts it kept made, which took 0.2 to 1.5 s at the end of
    a fleet (the pool's shutdown waits for it). By then its work is done and flushed:
    its results sent, its files written and closed, its standard streams flushed by
    multiprocessing. So it leaves at its exit handlers, by ``os._exit``, as a forked
    process does (handlers registered after this one, by what it imported since, run
    first)."""
    _lower_priority(niceness)
    atexit.register(os._exit, 0)


def _lower_priority(niceness: int) -> None:
    """Let the audits have the CPU first (see the module's docstring)."""
    if niceness <= 0:
        return
    try:
        os.nice(niceness)
    except OSError:  # not allowed here: draw at the same priority
        log.debug("could not lower the drawing processes' priority")


def _warm() -> None:
    """Import what drawing takes (matplotlib, jinja2, pandas: once per process), make
    the charts and compile the template, so that the first report is drawn as fast as
    the next."""
    from auditor.report import site

    site.prepare()


def _drawn(site: str, future: Future[str]) -> DrawnReport:
    """The report's path; None when it could not be drawn (logged)."""
    error = CancelledError() if future.cancelled() else future.exception()
    if error is None:
        return DrawnReport(site, future.result())
    log.warning("no report for %s: %s: %s", site, type(error).__name__, error)
    return DrawnReport(site, None)


@contextmanager
def _children_deaf_to_ctrl_c() -> Iterator[None]:
    """Processes started inside are born with SIGINT blocked (a mask survives fork and
    exec), so Ctrl-C, which reaches the whole process group, leaves them drawing. A
    Ctrl-C arriving meanwhile waits here for the moment, it is not lost. (The resource
    tracker is started first: starting it unblocks SIGINT.)"""
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
