"""A fleet's site reports, drawn beside the audits rather than in their way.

Drawing a site's report (five matplotlib PNGs and the HTML) takes about 0.6 s of
CPU: several times what auditing a small site costs its worker. Drawn one after
the other in the loop that collects the results, they held the whole fleet back:
while a report was drawn no result was saved and no site was sent. So the
history's owner reads each saved site's report data (a few quick queries: the
history stays in this process) and hands it to :class:`ReportWriter`'s pool of
processes, one per core, then goes on collecting.

Memory stays bounded: at most ``backlog`` reports are drawn at once. When that
many are, :meth:`ReportWriter.add` waits for one to finish, so the fleet sends
no new site meanwhile (its generator is not asked for the next result): the
audits slow down to the pace of the reports rather than queueing data without
end. A report that cannot be drawn leaves the result without a
``report`` path (logged), never the fleet stopped.

The pool's processes do not hear Ctrl-C (it reaches the whole process group):
the owner alone handles it, and may still finish the few reports pending.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing import resource_tracker
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from auditor.fleet.outcome import SiteFailure

if TYPE_CHECKING:
    from auditor.history import History
    from auditor.report import ReportData
    from auditor.scorer.result import AuditResult

__all__ = ["BACKLOG_PER_PROCESS", "ReportWriter", "draw_report"]

log = logging.getLogger(__name__)

#: Reports being drawn (sent to the pool, not finished) per process, at most.
BACKLOG_PER_PROCESS = 2


def draw_report(data: ReportData, folder: str) -> str:
    """Draw one site's report into ``folder`` (in a pool process); its HTML path."""
    from auditor.report import write_site_report

    return str(write_site_report(data, Path(folder)))


class ReportWriter:
    """Writes each saved result's report under ``out`` in a pool of processes.

    :meth:`add` takes the outcomes as the fleet yields them; :meth:`take` hands back
    those finished (a result once its report is written, with its ``report`` path; a
    failure at once) and forgets them; :meth:`drain` waits for the rest. Nothing is
    forgotten before it is taken, so a caller that takes with its signals held (as the
    CLI does) loses no finished site to a Ctrl-C.
    """

    def __init__(
        self,
        history: History,
        out: Path,
        *,
        processes: int | None = None,
        backlog: int = 0,
        draw: Callable[[ReportData, str], str] = draw_report,
    ) -> None:
        self.history = history
        self.out = out
        self.processes = max(1, processes or os.cpu_count() or 1)
        self.backlog = max(1, backlog or BACKLOG_PER_PROCESS * self.processes)
        self.draw = draw  # run in the pool: a module-level function
        self._pool: ProcessPoolExecutor | None = None
        self._pending: dict[Future[str], AuditResult] = {}  # in the order sent
        self._queued: deque[AuditResult] = deque()  # not sent yet (an add interrupted)
        self._failures: deque[SiteFailure] = deque()

    def __enter__(self) -> ReportWriter:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start the pool's processes and their imports now (they take seconds, which the
        fleet's own start-up hides), rather than when the first report is due."""
        with _children_deaf_to_ctrl_c():
            for _ in range(self.processes):
                self._executor().submit(_warm)

    @property
    def drawing(self) -> int:
        """Reports sent to the pool and not drawn yet."""
        return sum(1 for future in self._pending if not future.done())

    def add(self, outcome: AuditResult | SiteFailure) -> None:
        """Send ``outcome``'s report to be drawn (a failure has none); first wait, while
        ``backlog`` reports are being drawn, for one of them to finish."""
        if isinstance(outcome, SiteFailure):
            self._failures.append(outcome)
            return
        self._queued.append(outcome)
        self._send()

    def take(self) -> list[AuditResult | SiteFailure]:
        """The outcomes finished since the last call: failures, then results whose report
        is written (or could not be), in the order they were added."""
        finished: list[AuditResult | SiteFailure] = list(self._failures)
        self._failures.clear()
        for future in [f for f in self._pending if f.done()]:
            finished.append(_with_report(self._pending.pop(future), future))
        return finished

    def drain(self) -> None:
        """Wait until every report added is drawn (then :meth:`take` them)."""
        self._send()
        wait(list(self._pending))

    def close(self) -> None:
        """Stop the pool; reports not drawn yet are dropped."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._pending.clear()
        self._queued.clear()

    def _send(self) -> None:
        while self._queued:
            while self.drawing >= self.backlog:
                busy = [f for f in self._pending if not f.done()]
                wait(busy, return_when=FIRST_COMPLETED)
            self._submit(self._queued[0])
            self._queued.popleft()

    def _submit(self, result: AuditResult) -> None:
        from auditor.report import load_report_data, site_slug

        data = load_report_data(self.history, result.site)
        folder = str(self.out / site_slug(result.site))
        with _children_deaf_to_ctrl_c():  # a pool process may be started here
            try:
                future = self._executor().submit(self.draw, data, folder)
            except BrokenProcessPool:  # a drawing process died: a new pool
                self._pool = None
                future = self._executor().submit(self.draw, data, folder)
        self._pending[future] = result

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")  # the owner has threads: no fork
            self._pool = ProcessPoolExecutor(self.processes, mp_context=spawn)
        return self._pool


def _warm() -> None:
    import auditor.report.site  # noqa: F401 - matplotlib, jinja2, pandas: once per process


def _with_report(result: AuditResult, future: Future[str]) -> AuditResult:
    """The result with its report's path; as it was when the report failed (logged)."""
    error = CancelledError() if future.cancelled() else future.exception()
    if error is None:
        return replace(result, report=future.result())
    log.warning("no report for %s: %s: %s", result.site, type(error).__name__, error)
    return result


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
