"""The recorder's spool, without a reactor: what a history that cannot be reached did not
take is written to a gzip'd WARC, read back as it was fetched (a file cut mid-write up to
its last whole fetch), fed to the history once, oldest first, and removed."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("scrapy")

from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from auditor.audit import audit_site
from auditor.crawl.logfile import DEFAULT_MAX_BODY, read_crawl_log
from auditor.crawl.records import FetchRecord, LogProblem
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.errors import HistoryError
from auditor.history import History
from auditor.scrapy import CrawlLog
from auditor.scrapy.spool import Spools, feed_spools, history_key
from tests.crawl.sites import OPTIONS, crawl

AT = datetime(2026, 12, 1, 10, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
SITE = "https://shop.example"


def _read(data: bytes) -> list[FetchRecord | LogProblem]:
    return list(read_crawl_log(io.BytesIO(data), "warc", max_body=1 << 20))


def _written(folder: Path, records: list[FetchRecord]) -> tuple[Path, list[int]]:
    """A spool of ``records``; its path and its size after each record."""
    spool = Spools(folder, "k").new_file()
    sizes = []
    for record in records:
        spool.write(record)
        sizes.append(spool.path.stat().st_size)
    spool.close()
    return spool.path, sizes


def test_a_spooled_fetch_reads_back_as_the_recorder_saw_it(tmp_path):
    latin = "<https://shop.example/caf\xe9>; rel=canonical"  # a header's bytes, as latin-1
    headers = {
        "Content-Type": "text/html; charset=iso-8859-1",
        "X-Robots-Tag": "noindex",
        "Link": latin,
        "Content-Encoding": "gzip",
        "Transfer-Encoding": "chunked",
    }
    records = [
        FetchRecord(SITE + "/p/1", AT, 200, body=b"<html>caf\xe9\r\n1a\n</html>", headers=headers),
        FetchRecord(SITE + "/p/2", AT, 200, body=b"<html>cut", truncated=True),
        FetchRecord(SITE + "/old", AT, 301, headers={"Location": SITE + "/p/1"}),
        FetchRecord(SITE + "/p/3", AT, None),
        FetchRecord(SITE + "/p/4", AT + timedelta(seconds=1), 999, body=b"odd"),
        FetchRecord(SITE + "/p/5", AT, 200, body=b""),
    ]
    path, _ = _written(tmp_path, records)
    assert path.name.endswith(".warc.gz") and path.parent == tmp_path

    back = _read(path.read_bytes())
    assert all(isinstance(r, FetchRecord) for r in back), back
    assert [r.url for r in back] == [r.url for r in records]
    assert all(r.fetched_at == AT.astimezone(UTC) for r in back[:4])  # to the microsecond
    first, cut, moved, failed, odd, empty = back
    assert first.status == 200 and first.body == records[0].body and not first.truncated
    # the body is stored as Scrapy decoded it: the encodings that described it are left out
    assert first.headers == {k: v for k, v in headers.items() if "Encoding" not in k}
    assert cut.body == b"<html>cut" and cut.truncated
    assert (moved.status, moved.headers, moved.body) == (301, {"Location": SITE + "/p/1"}, b"")
    assert (failed.status, failed.body, failed.headers) == (None, None, {})
    assert odd.status is None  # no HTTP status (100-599): a fetch that got no answer
    assert empty.status == 200 and empty.body == b""
    assert {r.content_hash for r in back} == {None}  # as the live recorder hands them


def test_a_spool_cut_mid_write_is_read_to_its_last_whole_fetch(tmp_path):
    records = [FetchRecord(f"{SITE}/p/{i}", AT, 200, body=b"<p>%d</p>" % i * 500) for i in range(5)]
    path, sizes = _written(tmp_path, records)
    data = path.read_bytes()
    assert len(data) == sizes[-1]
    for cut in (sizes[3] + 1, (sizes[3] + sizes[4]) // 2, sizes[4] - 1):
        items = _read(data[:cut])
        fetches = [i for i in items if isinstance(i, FetchRecord)]
        assert [f.url for f in fetches] == [r.url for r in records[:4]], cut
        (problem,) = [i for i in items if isinstance(i, LogProblem)]  # the cut one, named
        assert problem.code in ("truncated-file", "bad-record")  # a gzip member, or its start
    assert len(_read(data[: sizes[3]])) == 4  # cut between two fetches: nothing amiss


def test_every_real_page_of_the_corpus_reads_back_byte_for_byte(corpus, tmp_path):
    bodies = [
        gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        for p in sorted((corpus / "html").rglob("*"))
        if p.is_file() and p.name.endswith((".html", ".html.gz"))
    ]
    assert len(bodies) > 100
    headers = {"Content-Type": "text/html"}
    records = [
        FetchRecord(f"{SITE}/{i}", AT + timedelta(microseconds=i), 200, body=b, headers=headers)
        for i, b in enumerate(bodies)
    ]
    path, _ = _written(tmp_path, records)
    with path.open("rb") as stream:
        back = list(read_crawl_log(stream, "warc", max_body=DEFAULT_MAX_BODY))
    assert [(r.url, r.fetched_at, r.body) for r in back] == [
        (r.url, r.fetched_at, r.body) for r in records
    ]


@pytest.fixture
def audited(tmp_path) -> Iterator[tuple[SiteServer, SimulatedSite, str]]:
    """A loopback site audited into a SQLite history."""
    site = SimulatedSite("spooled", {"pages": BEHAVIOURS["accurate-jsonld"]}, 20, seed=3)
    db = str(tmp_path / "history.sqlite3")
    with SiteServer(site) as server:
        with History.open(db) as history:
            audit_site(server.origin, history, OPTIONS)
        yield server, site, db


def _log_rows(db: str) -> dict[str, int]:
    with History.open(db) as history:
        rows = history._db.rows("SELECT loc, count(*) FROM crawl_log GROUP BY loc")
    return {str(loc): int(n) for loc, n in rows}


def test_a_spool_is_fed_once_oldest_first_and_removed(audited, tmp_path):
    server, site, db = audited
    paths = sorted(site.pages)
    spools = Spools(tmp_path / "spool", history_key(db))
    at = datetime.now(UTC) - timedelta(days=2)
    older, newer = spools.new_file(), spools.new_file()
    for record in crawl(server.origin, paths, at):
        older.write(record)
    for record in crawl(server.origin, paths[:5], at + timedelta(days=1)):
        newer.write(record)
    older.close()
    newer.close()
    copy = tmp_path / "copy.warc.gz"
    copy.write_bytes(older.path.read_bytes())
    other = Spools(tmp_path / "spool", history_key(str(tmp_path / "other.sqlite3")))
    theirs = other.new_file()
    theirs.write(FetchRecord(server.origin + paths[0], at, 200, body=b"x"))
    theirs.close()

    with History.open(db) as history:
        fed = feed_spools(spools, history, now=datetime.now(UTC), max_body=1 << 20, batch=7)
    assert fed.files == 2 and not fed.problems
    assert (fed.summary.recorded, fed.summary.already_recorded) == (len(paths) + 5, 0)
    assert fed.summary.changed + fed.summary.unchanged == 5  # the newer compared with the older
    assert spools.paths() == [] and other.paths() == [theirs.path]  # another history's: kept
    assert _log_rows(db) == {server.origin + p: 2 if p in paths[:5] else 1 for p in paths}

    copy.rename(spools.folder / older.path.name)  # the same spool again: recorded once
    with History.open(db) as history:
        again = feed_spools(spools, history, now=datetime.now(UTC), max_body=1 << 20, batch=7)
    assert (again.summary.recorded, again.summary.already_recorded) == (0, len(paths))
    assert spools.paths() == []


def test_a_spool_being_written_is_not_fed(audited, tmp_path):
    server, site, db = audited
    spools = Spools(tmp_path / "spool", history_key(db))
    writing = spools.new_file()
    writing.write(FetchRecord(server.origin + sorted(site.pages)[0], AT, 200, body=b"x"))
    with History.open(db) as history:
        fed = feed_spools(spools, history, now=datetime.now(UTC), max_body=1 << 20, batch=7)
    writing.close()
    assert fed.files == 0 and fed.summary.recorded == 0
    assert spools.paths() == [writing.path]


def _responses(origin: str, paths: list[str], at: datetime) -> list[tuple[Request, HtmlResponse]]:
    pairs = []
    for record in crawl(origin, paths, at):
        request = Request(record.url)
        response = HtmlResponse(
            record.url,
            status=record.status or 0,
            headers=dict(record.headers),
            body=record.body or b"",
            request=request,
        )
        pairs.append((request, response))
    return pairs


def test_what_a_history_failing_mid_crawl_did_not_save_is_spooled(audited, tmp_path, monkeypatch):
    """Batches of 5: the first saved, the second fails mid-way; the fetches of the failed
    batch and every one after are spooled, and fed they make one log row each."""
    server, site, db = audited
    paths = sorted(site.pages)
    folder = tmp_path / "spool"
    settings = {"AUDITOR_DB": db, "AUDITOR_SPOOL_DIR": str(folder), "AUDITOR_RECORD_BATCH": 5}
    log = CrawlLog(get_crawler(settings_dict=settings))
    saved = History.save_fetches
    calls = []

    def failing(history, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) > 1:
            raise HistoryError("the connection to the history was lost")
        return saved(history, *args, **kwargs)

    monkeypatch.setattr(History, "save_fetches", failing)
    for request, response in _responses(server.origin, paths, datetime.now(UTC)):
        log.process_response(request, response)
    log.writer.close()
    monkeypatch.setattr(History, "save_fetches", saved)

    assert log.writer.error is not None
    spool = log.writer.spool
    assert spool is not None and spool.count == len(paths) - 5
    assert spool.path.parent == folder
    assert len(_log_rows(db)) == 5
    spools = Spools(folder, history_key(db))
    with History.open(db) as history:
        fed = feed_spools(spools, history, now=datetime.now(UTC), max_body=1 << 20, batch=5)
    assert fed.summary.recorded == len(paths) - 5 and fed.summary.already_recorded == 0
    assert _log_rows(db) == {server.origin + p: 1 for p in paths}
    assert spools.paths() == []
