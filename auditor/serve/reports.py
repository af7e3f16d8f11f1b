"""Site reports for ``auditor serve``, drawn when first asked for and kept until the site's
next run.

A report is the same folder ``auditor report`` writes (``index.html`` and its PNGs) under
the server's reports folder, at :func:`~auditor.report.site_slug`, with a small marker
(:data:`MARKER`) naming the run it was drawn from. A request for a report whose marker
names the site's latest run is answered from the files; otherwise the report is drawn
again first. Drawing takes about 0.4 s of CPU (five matplotlib charts), so it happens in
a pool of processes: the server's own threads only read the report's data from the
history and wait, and every other request goes on meanwhile. Two requests for the same
report while it is drawn wait for the one drawing.

Only files inside the reports folder are ever served: a name is one path component of
letters, digits, dots, dashes and underscores that does not start with a dot, and the
file it names must resolve inside the site's report folder.

Touches: the database, the disk.
"""

from __future__ import annotations

import logging
import multiprocessing
import re
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.fleet.reports import draw_report

if TYPE_CHECKING:
    from auditor.serve.readers import Readers

__all__ = ["MARKER", "ReportCache", "ReportMissing"]

log = logging.getLogger(__name__)

#: The file in a report's folder naming the run it was drawn from.
MARKER = ".drawn-run"
#: What a file name in a report's folder may be.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")
#: Drawing processes at most: each holds a copy of matplotlib and pandas (~150 MB).
MAX_DRAWERS = 2


class ReportMissing(LookupError):
    """No such report file: the site is unknown, or the name is not one a report has."""


class ReportCache:
    """Reports drawn on demand under ``folder`` from the history of ``readers``."""

    def __init__(self, readers: Readers, folder: Path, *, drawers: int = MAX_DRAWERS) -> None:
        self.readers = readers
        self.folder = folder
        self.drawers = max(1, drawers)
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._drawing: dict[str, Future[str]] = {}  # slug: the drawing under way
        self.drawn = 0  #: reports drawn since the server started

    def file(self, site: str, slug: str, name: str = "index.html") -> Path:
        """The path of ``name`` in ``site``'s report (folder ``slug``), drawn first when
        missing or older than the site's latest run. Blocks while it is drawn: call it
        from a worker thread. Raises :class:`ReportMissing` for a name a report cannot
        have, a site never audited or a file the report does not hold."""
        if not _SAFE_NAME.fullmatch(name):
            raise ReportMissing(name)
        folder = self.folder / slug
        self._current(site, slug, folder)
        path = (folder / name).resolve()
        if path.parent != folder.resolve() or not path.is_file():
            raise ReportMissing(name)
        return path

    def close(self) -> None:
        """Stop the drawing processes (reports being drawn are dropped)."""
        self._drop_pool(wait=True)

    def _current(self, site: str, slug: str, folder: Path) -> None:
        """Draw ``site``'s report unless its folder already holds its latest run's."""
        latest = self.readers.history().latest_run(site)
        if latest is None:
            raise ReportMissing(site)
        if _marked(folder) == latest.run_id:
            return
        with self._lock:
            future = self._drawing.get(slug)
            mine = future is None
            if future is None:
                future = Future()
                self._drawing[slug] = future
        if not mine:
            future.result()  # another request is drawing it: its outcome is ours
            return
        try:
            self._draw(site, folder, latest.run_id)
            future.set_result(str(folder))
        except BaseException as exc:
            future.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._drawing.pop(slug, None)

    def _draw(self, site: str, folder: Path, run_id: int) -> None:
        from auditor.report import load_report_data

        data = load_report_data(self.readers.history(), site)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MARKER).unlink(missing_ok=True)
        try:
            self._executor().submit(draw_report, data, str(folder)).result()
        except BrokenProcessPool:  # a drawing process died (killed, out of memory): a new pool
            log.warning("a report-drawing process died; drawing %s in a new pool", site)
            self._drop_pool()
            self._executor().submit(draw_report, data, str(folder)).result()
        (folder / MARKER).write_text(f"{run_id}\n", encoding="ascii")
        self.drawn += 1
        log.info("drew the report of %s (run %d)", site, run_id)

    def _drop_pool(self, *, wait: bool = False) -> None:
        """Shut the pool down and forget it (``wait``: until its processes end): the next
        drawing starts another."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                spawn = multiprocessing.get_context("spawn")  # the server has threads
                self._pool = ProcessPoolExecutor(self.drawers, mp_context=spawn)
            return self._pool


def _marked(folder: Path) -> int | None:
    """The run the report in ``folder`` was drawn from, if it says."""
    try:
        return int((folder / MARKER).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None
