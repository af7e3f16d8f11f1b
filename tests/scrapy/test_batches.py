"""The Scrapy add-on's recordings are crawl batches, without a reactor: a crawl's fetches
are one batch naming its spider (its id in the stats), each spool fed is one naming its
file, and ``auditor crawled --take-back`` takes either back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

pytest.importorskip("scrapy")

from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from auditor.audit import audit_site
from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.scrapy import CrawlLog
from auditor.scrapy.recorder import _report
from auditor.scrapy.spool import Spools, feed_spools, history_key
from tests.crawl.sites import OPTIONS, crawl


class _Shop(Spider):
    name = "shop"


@pytest.fixture
def audited(tmp_path) -> Iterator[tuple[SiteServer, SimulatedSite, str]]:
    """A loopback site audited into a SQLite history."""
    site = SimulatedSite("batched", {"pages": BEHAVIOURS["accurate-jsonld"]}, 8, seed=3)
    db = str(tmp_path / "history.sqlite3")
    with SiteServer(site) as server:
        with History.open(db) as history:
            audit_site(server.origin, history, OPTIONS)
        yield server, site, db


def _state_count(db: str) -> int:
    with History.open(db) as history:
        return int(history._db.rows("SELECT count(*) FROM crawl_state")[0][0])


def test_a_crawl_is_one_batch_named_by_its_spider_and_its_id_is_in_the_stats(audited, tmp_path):
    server, site, db = audited
    settings = {"AUDITOR_DB": db, "AUDITOR_SPOOL_DIR": str(tmp_path / "spool"),
                "AUDITOR_RECORD_BATCH": 3}  # fmt: skip
    crawler = get_crawler(_Shop, settings_dict=settings)
    log = CrawlLog(crawler)
    for record in crawl(server.origin, sorted(site.pages), datetime.now(UTC)):
        request = Request(record.url)
        response = HtmlResponse(record.url, status=200, headers=dict(record.headers),
                                body=record.body or b"", request=request)  # fmt: skip
        log.process_response(request, response)
    log.writer.close()
    assert crawler.stats is not None
    _report(log.writer, crawler.stats)
    assert crawler.stats.get_value("auditor/recorded/recorded") == 8
    batch = crawler.stats.get_value("auditor/recorded/batch")
    with History.open(db) as history:
        (recorded,) = history.crawl_batches()
    assert (recorded.id, recorded.sources, recorded.fetches) == (batch, ("scrapy spider shop",), 8)
    assert main(["crawled", "--take-back", str(batch), "--db", db]) == 0
    assert _state_count(db) == 0


def test_each_spool_fed_is_a_batch_named_by_its_file(audited, tmp_path):
    server, site, db = audited
    spools = Spools(tmp_path / "spool", history_key(db))
    at = datetime.now(UTC) - timedelta(days=2)
    older, newer = spools.new_file(), spools.new_file()
    paths = sorted(site.pages)
    for record in crawl(server.origin, paths[:4], at):
        older.write(record)
    for record in crawl(server.origin, paths[4:], at):
        newer.write(record)
    names = (str(older.path), str(newer.path))
    older.close()
    newer.close()
    with History.open(db) as history:
        fed = feed_spools(spools, history, now=datetime.now(UTC), max_body=1 << 20, batch=3)
        found = history.crawl_batches()
    assert fed.batches == [1, 2] and fed.summary.batch_id is None  # ids are not summed
    assert [(b.id, b.sources, b.fetches) for b in found] == [(1, names[:1], 4), (2, names[1:], 4)]
