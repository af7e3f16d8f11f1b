"""The recorder's spools: where the fetches its history could not take wait for it, and
how they are fed to it.

A spool (:mod:`auditor.scrapy.spoolfile`) is named for the history it is meant for, so a
crawl feeds only its own history's: ``spool-KEY-TIME-PID-N.warc.gz`` in the spool folder
(``AUDITOR_SPOOL_DIR``), where KEY is a digest of the history's location (its file, made
absolute; its PostgreSQL URL, password left out). When the recorder opens, the spools of
its history are fed to it, oldest first, each a crawl batch of its own (named by its
path) and removed once recorded; one another crawl is writing (or feeding) is left to it.
A fetch fed twice (a crash between the recording and the removal, or ``auditor crawled
--from`` run on the spool first) is ``already_recorded``.

Touches: the disk, the database.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from weakref import WeakKeyDictionary

from auditor.crawl.logfile import read_crawl_log
from auditor.crawl.record import CrawlSummary, record_fetches
from auditor.crawl.records import FetchRecord, LogProblem
from auditor.errors import HistoryError
from auditor.history.location import locate
from auditor.scrapy.spoolfile import SpoolFile, claim

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from auditor.history import History
    from auditor.scrapy.settings import AuditorSettings

__all__ = [
    "Fed",
    "Feeder",
    "Spools",
    "feed_spools",
    "feeder_of",
    "history_key",
    "history_name",
    "spool_folder",
]

_log = logging.getLogger(__name__)
#: Hex digits of the history's digest in a spool's name: enough that two histories of one
#: folder never share it, short enough to read.
KEY_LENGTH = 12
#: Problems of one spool named in the log (all are counted): a damaged file says enough.
PROBLEMS_LOGGED = 10
_FEEDERS: WeakKeyDictionary[Crawler, Feeder] = WeakKeyDictionary()


def spool_folder(spool_dir: str) -> Path:
    """The spools' folder (``AUDITOR_SPOOL_DIR``), absolute, read as Scrapy reads a data
    path: as is if absolute, else in the project's ``.scrapy`` (which Scrapy makes if
    missing), else in ``./.scrapy``."""
    from scrapy.utils.project import data_path

    return Path(data_path(spool_dir)).resolve()


def history_name(db: str | None) -> str:
    """The history as messages name it: its file, or its URL with any password masked."""
    try:
        return str(locate(db))
    except HistoryError:
        return str(db)


def history_key(db: str | None) -> str:
    """The digest naming the spools of the history at ``db`` (``AUDITOR_DB`` as
    :meth:`History.open <auditor.history.History.open>` reads it)."""
    try:
        location = locate(db)
        name = str(location.path.resolve()) if location.path else str(location)
    except HistoryError:
        name = str(db)
    return hashlib.sha256(name.encode()).hexdigest()[:KEY_LENGTH]


@dataclass(frozen=True)
class Spools:
    """The spools of one history (``key``) in ``folder``."""

    folder: Path
    key: str

    def paths(self) -> list[Path]:
        """This history's spools, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(self.folder.glob(f"spool-{self.key}-*.warc.gz"))

    def new_file(self, about: str = "") -> SpoolFile:
        """A new spool, locked for writing; ``about`` goes in its ``warcinfo``."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        for n in count():
            path = self.folder / f"spool-{self.key}-{stamp}-{os.getpid()}-{n}.warc.gz"
            try:
                return SpoolFile.create(path, about)
            except FileExistsError:
                continue
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class Fed:
    """What feeding spools did: the files fed (and removed), what was recorded of their
    fetches, and the problems met reading them (a record cut by a crash among them)."""

    files: int = 0
    summary: CrawlSummary = field(default_factory=CrawlSummary)
    problems: int = 0
    batches: list[int] = field(default_factory=list)  # each file's crawl batch

    def add(self, summary: CrawlSummary) -> None:
        """Count one more file's recording."""
        self.files += 1
        if summary.batch_id is not None:
            self.batches.append(summary.batch_id)
        total = self.summary
        for item in fields(CrawlSummary):
            mine, theirs = getattr(total, item.name), getattr(summary, item.name)
            if isinstance(mine, int) and item.name != "batch_id":
                setattr(total, item.name, mine + theirs)
        for site, n in summary.sites.items():
            total.sites[site] = total.sites.get(site, 0) + n


def feed_spools(
    spools: Spools,
    history: History,
    *,
    now: datetime,
    max_body: int,
    batch: int,
    fed: Fed | None = None,
) -> Fed:
    """Record each spool of ``spools`` not held by another process into ``history``,
    oldest first, and remove it; counted into ``fed`` (a new one by default), which
    keeps what was fed before a failure."""
    fed = fed if fed is not None else Fed()
    for path in spools.paths():
        stream = claim(path)
        if stream is None:
            continue
        with stream:  # the lock is held until the file is gone
            fetches = _fetches(stream, path, max_body, fed)
            summary = record_fetches(history, fetches, now=now, batch=batch, sources=[str(path)])
            path.unlink()
        fed.add(summary)
    return fed


def _fetches(stream: BinaryIO, path: Path, max_body: int, fed: Fed) -> Iterator[FetchRecord]:
    named = 0
    for item in read_crawl_log(stream, "warc", max_body=max_body):
        if isinstance(item, LogProblem):
            fed.problems += 1
            named += 1
            if named <= PROBLEMS_LOGGED:
                _log.warning(_problem_message(path, item))
            continue
        yield item


def _problem_message(path: Path, problem: LogProblem) -> str:
    said = f"auditor: spool {path}: record {problem.line}: {problem.code}: {problem.detail}"
    if problem.code == "truncated-file":
        said += " (its crawl stopped while writing it; the fetches before were read)"
    return said


class Feeder:
    """Feeds one crawler's spools to its history, once: the recorder and the plan both
    ask, whichever asks first feeds, the other waits until it is done."""

    def __init__(self, config: AuditorSettings, spools: Spools) -> None:
        self.config = config
        self.spools = spools
        self.fed = Fed()
        self.error: Exception | None = None
        self._lock = threading.Lock()
        self._done = False

    def feed(self) -> None:
        """Feed the spools unless done already (blocking: call it on a thread)."""
        with self._lock:
            if self._done:
                return
            self._done = True
            if self.spools.paths():
                try:
                    self._feed()
                except Exception as exc:  # the spools left stay for the next crawl
                    self.error = exc

    def _feed(self) -> None:
        from auditor.history import History

        config = self.config
        with History.open(config.db) as history:
            feed_spools(
                self.spools,
                history,
                now=config.now(),
                max_body=config.max_body,
                batch=config.record_batch,
                fed=self.fed,
            )

    def register(self, crawler: Crawler) -> None:
        """Make this the crawler's feeder, the one :func:`feeder_of` gives."""
        _FEEDERS[crawler] = self


def feeder_of(crawler: Crawler | None) -> Feeder | None:
    """The crawler's feeder (None: its fetches are not recorded)."""
    return _FEEDERS.get(crawler) if crawler is not None else None
