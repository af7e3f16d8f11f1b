"""The downloader middleware that records every page the crawl fetched into auditor's
crawl log, as ``auditor crawled`` records a crawler's log: each URL's last fetch for
the next plan, and what each fetch shows of lastmod for the next verdict.

It sits outside Scrapy's retry and redirect middlewares, so it sees what the crawl
finally got: a response (after retries), a redirect chain (each redirecting URL is
recorded with its status and ``Location``, the last with the response), or a download
that failed for good (recorded with no status). Sitemaps, robots.txt and responses from
Scrapy's HTTP cache are not page fetches and are left out.

Judging a fetch reads its page (structured data, main content): that is done on a
thread of its own, so the crawl does not wait; ``spider_closed`` waits for the last
fetches to be saved, and puts the counts in Scrapy's stats under ``auditor/recorded``.

No fetch is lost when the history cannot be reached: the fetches it did not save (the
batch it failed on, then every one after) are written to a spool
(:mod:`auditor.scrapy.spool`), said in the stats (``auditor/spooled``,
``auditor/spool_file``) and in a warning that tells how to feed it. When the spider
opens, the spools earlier crawls left for this history are fed first (``auditor/fed/``).

Touches: the database, the disk.
"""

from __future__ import annotations

import logging
import queue
import shlex
import threading
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured

from auditor.crawl.record import CrawlSummary, record_fetches
from auditor.crawl.records import FetchRecord
from auditor.errors import HistoryError
from auditor.scrapy.common import counted, in_thread
from auditor.scrapy.middleware import is_sitemap_request
from auditor.scrapy.plans import frontier_of
from auditor.scrapy.settings import AuditorSettings
from auditor.scrapy.spool import Feeder, Spools, history_key, history_name, spool_folder

if TYPE_CHECKING:
    from datetime import datetime

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from auditor.scrapy.spoolfile import SpoolFile

__all__ = ["CrawlLog", "fetch_records"]

_log = logging.getLogger(__name__)

#: Fetches waiting to be judged at most: past it, the crawl waits for the recorder.
QUEUE_SIZE = 500
_DONE = object()


class CrawlLog:
    """Records the crawl's page fetches (module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        config = AuditorSettings.of(crawler.settings)
        if not config.enabled or not config.record:
            raise NotConfigured("AUDITOR_ENABLED or AUDITOR_RECORD is off")
        self.crawler = crawler
        self.config = config
        spools = Spools(spool_folder(config.spool_dir), history_key(config.db))
        self.feeder = Feeder(config, spools)
        self.feeder.register(crawler)
        spider = getattr(crawler.spidercls, "name", None)
        self.writer = _Writer(config, self.feeder, _about(spider, config.db))
        self.writer.source = f"scrapy spider {spider or '?'}"
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlLog:
        """Scrapy's constructor."""
        return cls(crawler)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """Record a page's response; the response goes on unchanged."""
        if self._is_page(request) and "cached" not in response.flags:
            for record in fetch_records(request, response, self.config.now(), self.config.max_body):
                self.writer.put(record)
        return response

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        """Record a page whose download failed for good (retries spent)."""
        if not isinstance(exception, IgnoreRequest) and self._is_page(request):
            self.writer.put(FetchRecord(request.url, self.config.now(), None))

    def _is_page(self, request: Request) -> bool:
        if is_sitemap_request(request) or urlsplit(request.url).path == "/robots.txt":
            return False
        frontier = frontier_of(self.crawler)
        return frontier is None or not frontier.is_sitemap(request.url)

    async def _opened(self) -> None:
        await in_thread(self.feeder.feed)
        _report_fed(self.feeder, self._stats())

    async def _closed(self) -> None:
        await in_thread(self.writer.close)
        _report(self.writer, self._stats())

    def _stats(self) -> StatsCollector:
        stats = self.crawler.stats
        assert stats is not None
        return stats


def _about(spider: str | None, db: str | None) -> str:
    return (
        f"fetches the Scrapy spider {spider or '?'} could not record in the history "
        f"{history_name(db)}; auditor crawled --from this file records them"
    )


def _report_fed(feeder: Feeder, stats: StatsCollector) -> None:
    """The spools of earlier crawls fed when the spider opened: stats and log."""
    fed = feeder.fed
    if fed.files or fed.problems:
        stats.set_value("auditor/fed/spools", fed.files)
        stats.set_value("auditor/fed/problems", fed.problems)
        stats.set_value("auditor/fed/batches", list(fed.batches))
        for key, value in fed.summary.to_dict().items():
            if isinstance(value, int):
                stats.set_value(f"auditor/fed/{key}", value)
        _log.info(
            "auditor: %s of earlier crawls fed to the history: %s recorded, %s already recorded",
            counted(fed.files, "spool"),
            counted(fed.summary.recorded, "fetch", "fetches"),
            f"{fed.summary.already_recorded:,}",
        )
    if feeder.error is not None:
        stats.set_value("auditor/feed_failed", 1)
        _log.warning(
            "auditor: the spools of earlier crawls could not be fed to the history (%s): "
            "they stay in %s for the next crawl",
            feeder.error,
            feeder.spools.folder,
            exc_info=None if isinstance(feeder.error, HistoryError) else feeder.error,
        )


def _report(writer: _Writer, stats: StatsCollector) -> None:
    """What the crawl's fetches became: recorded, or spooled (or lost): stats and log."""
    spool = writer.spool
    spooled = spool.count if spool is not None else 0
    if writer.error is None or not (spooled or writer.lost):
        summary = writer.summary
        for key, value in summary.to_dict().items():
            if isinstance(value, int):
                stats.set_value(f"auditor/recorded/{key}", value)
        _log.info(
            "auditor: recorded %s of %s (%s changed, %s unchanged, %s failed)%s",
            counted(summary.recorded, "fetch", "fetches"),
            counted(len(summary.sites), "site"),
            f"{summary.changed:,}",
            f"{summary.unchanged:,}",
            f"{summary.failed:,}",
            "" if summary.batch_id is None else f" as batch {summary.batch_id}",
        )
    if writer.error is None:
        return
    stats.set_value("auditor/record_failed", 1)
    if spool is not None and spooled:
        stats.set_value("auditor/spooled", spooled)
        stats.set_value("auditor/spool_file", str(spool.path))
        _log.warning(
            "auditor: the history could not take the crawl's fetches (%s): %s spooled to %s. "
            "The next crawl with this history records them before its own; to record them "
            "now: auditor crawled --from %s --db %s",
            writer.error,
            counted(spooled, "fetch", "fetches"),
            spool.path,
            shlex.quote(str(spool.path)),
            shlex.quote(history_name(writer.config.db)),
        )
    if writer.lost:
        stats.set_value("auditor/lost", writer.lost)
        _log.error(
            "auditor: %s could be neither recorded nor spooled (%s): lost",
            counted(writer.lost, "fetch", "fetches"),
            writer.spool_error,
        )


def fetch_records(
    request: Request, response: Response, at: datetime, max_body: int
) -> list[FetchRecord]:
    """What one final response says of the URLs it took: each redirecting URL with its
    status and ``Location``, then the URL answered, with its body and headers."""
    chain = [str(u) for u in request.meta.get("redirect_urls", ())]
    reasons = list(request.meta.get("redirect_reasons", ()))
    records = []
    for i, url in enumerate(chain):
        reason = reasons[i] if i < len(reasons) else None
        if isinstance(reason, int):  # a meta refresh ("meta refresh") is no HTTP answer
            target = chain[i + 1] if i + 1 < len(chain) else response.url
            records.append(FetchRecord(url, at, reason, headers={"Location": target}))
    body = response.body
    records.append(
        FetchRecord(
            response.url,
            at,
            response.status,
            body=body[:max_body],
            headers=_headers(response),
            truncated=len(body) > max_body,
        )
    )
    return records


def _headers(response: Response) -> dict[str, str]:
    found = {}
    for name, values in response.headers.items():
        key = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        found[key] = ", ".join(
            v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in values
        )
    return found


class _Writer:
    """Saves fetches from a queue on a thread of its own, with a history of its own;
    what the history does not take goes to a spool."""

    def __init__(self, config: AuditorSettings, feeder: Feeder, about: str) -> None:
        self.config = config
        self.feeder = feeder
        self.about = about
        self.source = "scrapy"  # what the crawl's batch names (auditor crawled --batches)
        self.summary = CrawlSummary()
        self.error: Exception | None = None
        self.spool: SpoolFile | None = None
        self.spool_error: OSError | None = None
        self.lost = 0  # fetches neither recorded nor spooled
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_SIZE)
        # The fetches handed to record_fetches and maybe not saved yet: it reads them a
        # batch at a time and saves each batch before it reads the next.
        self._unsaved: deque[FetchRecord] = deque(maxlen=config.record_batch)
        self._thread: threading.Thread | None = None

    def put(self, record: FetchRecord) -> None:
        """Queue one fetch (the thread starts with the first)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="auditor-crawl-log")
            self._thread.daemon = True
            self._thread.start()
        self._queue.put(record)

    def close(self) -> None:
        """Wait until every queued fetch is saved (or spooled)."""
        if self._thread is not None:
            self._queue.put(_DONE)
            self._thread.join()

    def _records(self) -> Iterator[FetchRecord]:
        while (item := self._queue.get()) is not _DONE:
            self._unsaved.append(item)
            yield item

    def _run(self) -> None:
        from auditor.history import History

        self.feeder.feed()  # the spools of earlier crawls first (done when the spider opened)
        try:
            with History.open(self.config.db) as history:
                self.summary = record_fetches(
                    history,
                    self._records(),
                    now=self.config.now(),
                    batch=self.config.record_batch,
                    sources=[self.source],
                )
        except Exception as exc:  # the crawl goes on; what is left is spooled
            self.error = exc
            if not isinstance(exc, HistoryError):  # not the history out of reach: a bug
                _log.error("auditor: recording the crawl failed", exc_info=exc)
            self._spool_the_rest()

    def _left(self) -> Iterator[FetchRecord]:
        """The fetches not saved: the batch being saved, then all to come."""
        unsaved = list(self._unsaved)
        self._unsaved.clear()
        yield from unsaved
        while (item := self._queue.get()) is not _DONE:
            yield item

    def _spool_the_rest(self) -> None:
        for record in self._left():
            if self.spool_error is None:
                try:
                    self._spool().write(record)
                    continue
                except OSError as exc:  # the disk too: what is left is lost, and said
                    self.spool_error = exc
            self.lost += 1
        if self.spool is not None:
            try:
                self.spool.close()
            except OSError as exc:
                self.spool_error = self.spool_error or exc

    def _spool(self) -> SpoolFile:
        if self.spool is None:
            self.spool = self.feeder.spools.new_file(self.about)
        return self.spool
