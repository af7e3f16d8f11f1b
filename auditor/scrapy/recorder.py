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

Touches: the database.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from twisted.internet.threads import deferToThread

from auditor.crawl.record import CrawlSummary, record_fetches
from auditor.crawl.records import FetchRecord
from auditor.scrapy.middleware import is_sitemap_request
from auditor.scrapy.plans import frontier_of
from auditor.scrapy.settings import AuditorSettings

if TYPE_CHECKING:
    from datetime import datetime

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.internet.defer import Deferred

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
        self.writer = _Writer(config)
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

    def _closed(self, spider: Spider, reason: str) -> Deferred[None]:
        done: Deferred[None] = deferToThread(self.writer.close)
        done.addCallback(lambda _: self._report())
        return done

    def _report(self) -> None:
        summary, stats = self.writer.summary, self.crawler.stats
        assert stats is not None
        for key, value in summary.to_dict().items():
            if isinstance(value, int):
                stats.set_value(f"auditor/recorded/{key}", value)
        if self.writer.error:
            stats.set_value("auditor/record_failed", 1)
        _log.info(
            "auditor: recorded %s fetches (%s changed, %s unchanged, %s failed)",
            f"{summary.recorded:,}",
            f"{summary.changed:,}",
            f"{summary.unchanged:,}",
            f"{summary.failed:,}",
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
    """Saves fetches from a queue on a thread of its own, with a history of its own."""

    def __init__(self, config: AuditorSettings) -> None:
        self.config = config
        self.summary = CrawlSummary()
        self.error: BaseException | None = None
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_SIZE)
        self._thread: threading.Thread | None = None

    def put(self, record: FetchRecord) -> None:
        """Queue one fetch (the thread starts with the first)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="auditor-crawl-log")
            self._thread.daemon = True
            self._thread.start()
        self._queue.put(record)

    def close(self) -> None:
        """Wait until every queued fetch is saved."""
        if self._thread is not None:
            self._queue.put(_DONE)
            self._thread.join()

    def _records(self) -> Iterator[FetchRecord]:
        while (item := self._queue.get()) is not _DONE:
            yield item

    def _run(self) -> None:
        from auditor.history import History

        records = self._records()
        try:
            with History.open(self.config.db) as history:
                self.summary = record_fetches(
                    history, records, now=self.config.now(), batch=self.config.record_batch
                )
        except Exception as exc:  # the crawl goes on; what is left is drained
            self.error = exc
            _log.exception("auditor: recording the crawl failed")
            for _ in records:
                pass
