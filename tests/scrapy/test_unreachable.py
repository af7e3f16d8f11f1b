"""Real Scrapy crawls while the history is out of reach (a SQLite file whose folder is
gone, a PostgreSQL server stopped): no fetch is lost. The recorder spools them, and they
are recorded once the history is back, once each: by the next crawl, before its plan, or
by ``auditor crawled --from SPOOL``; a spool whose crawl was killed mid-write included."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("scrapy")

from auditor.audit import audit_site
from auditor.cli import main
from auditor.crawl.logfile import read_crawl_log
from auditor.crawl.records import FetchRecord
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from tests.crawl.sites import OPTIONS
from tests.history.conftest import WRITER
from tests.pgserver import running_server
from tests.scrapy.runs import CRAWL_ENV, ROOT, crawl_command, crawl_config, run_crawl

#: Seconds a killed crawl may take to spool its first fetches.
SPOOL_WAIT = 60


@dataclass
class Reach:
    """A history that can be put out of reach and brought back."""

    db: str
    down: Callable[[], None]
    up: Callable[[], None]


@contextmanager
def _history(backend: str, tmp_path: Path) -> Iterator[Reach]:
    if backend == "postgresql":
        with running_server() as server:  # a server of its own: this one is stopped
            yield Reach(server.new_database(WRITER), server.halt, server.resume)
        return
    folder, away = tmp_path / "store", tmp_path / "away"

    def down() -> None:  # the folder gone, a file in its place: it cannot be made again
        folder.rename(away)
        folder.write_text("not a folder")

    def up() -> None:
        folder.unlink()
        away.rename(folder)

    yield Reach(str(folder / "history.sqlite3"), down, up)


def _audited(db: str, origin: str) -> None:
    with History.open(db) as history:
        assert audit_site(origin, history, OPTIONS).verdict == "trusted"


def _log_rows(db: str) -> dict[str, int]:
    """Each URL's rows in the crawl log."""
    with History.open(db) as history:
        rows = history._db.rows("SELECT loc, count(*) FROM crawl_log GROUP BY loc")
    return {str(loc): int(n) for loc, n in rows}


def _site(name: str) -> SimulatedSite:
    return SimulatedSite(name, {"pages": BEHAVIOURS["accurate-jsonld"]}, 30, seed=4)


def test_what_a_crawl_fetched_out_of_reach_the_next_one_records_before_its_plan(backend, tmp_path):
    site = _site("away")
    with SiteServer(site) as server, _history(backend, tmp_path) as reach:
        _audited(reach.db, server.origin)
        reach.down()
        away = run_crawl(server, reach.db, tmp_path)
        reach.up()
        site.tick()
        back = run_crawl(server, reach.db, tmp_path)
        rows = _log_rows(reach.db)

    assert away.stats["auditor/plan_failed"] == 1 and away.stats["auditor/record_failed"] == 1
    assert away.pages == set(site.pages)  # unplanned: everything the spider asks for
    assert away.stats["auditor/spooled"] == len(site.pages)
    spool = Path(away.stats["auditor/spool_file"])
    assert spool.parent == tmp_path / "spool" and spool.name.endswith(".warc.gz")
    assert f"auditor crawled --from {spool}" in away.log  # how to feed it, said
    assert back.stats["auditor/fed/spools"] == 1 and not spool.exists()
    assert back.stats["auditor/fed/recorded"] == len(site.pages)
    # the spool was fed before the plan was made: nothing reads as never fetched, and
    # each page fetched again is compared with its spooled body
    assert back.pages and "never-fetched" not in {i["auditor"]["reason"] for i in back.items}
    assert back.stats["auditor/recorded/recorded"] == len(back.pages)
    assert back.stats["auditor/recorded/unknown_change"] == 0
    assert rows == {server.origin + p: 1 + (p in back.pages) for p in site.pages}


#: Scrapy on Twisted's own reactor rather than asyncio's: the add-on's coroutines run on both.
TWISTED_REACTOR = {"TWISTED_REACTOR": "twisted.internet.epollreactor.EPollReactor"}


def test_auditor_crawled_records_a_spool_once(tmp_path, capsys):
    site = _site("fed")
    with SiteServer(site) as server, _history("sqlite", tmp_path) as reach:
        _audited(reach.db, server.origin)
        reach.down()
        away = run_crawl(server, reach.db, tmp_path, **TWISTED_REACTOR)
        reach.up()
        spool = away.stats["auditor/spool_file"]
        summaries = []
        for _ in range(2):
            assert main(["crawled", "--from", spool, "--db", reach.db, "--json"]) == 0
            summaries.append(json.loads(capsys.readouterr().out))
        back = run_crawl(server, reach.db, tmp_path, **TWISTED_REACTOR)  # feeds it: all known
        rows = _log_rows(reach.db)

    pages = len(site.pages)
    assert [(s["recorded"], s["already_recorded"]) for s in summaries] == [(pages, 0), (0, pages)]
    assert (back.stats["auditor/fed/recorded"], back.stats["auditor/fed/already_recorded"]) == (
        0,
        pages,
    )
    assert not Path(spool).exists()
    assert rows == {server.origin + p: 1 + (p in back.pages) for p in site.pages}


def _killed_once_spooling(config: dict, folder: Path, at_least: int) -> Path:
    """Run a crawl and kill it (SIGKILL) once its spool holds ``at_least`` bytes."""
    crawl = subprocess.Popen(
        crawl_command(config),
        cwd=ROOT,
        env=CRAWL_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + SPOOL_WAIT
    try:
        while time.monotonic() < deadline and crawl.poll() is None:
            found = list(folder.glob("*.warc.gz"))
            if found and found[0].stat().st_size >= at_least:
                return found[0]
            time.sleep(0.02)
        raise AssertionError("the crawl spooled too little before it ended")
    finally:
        crawl.kill()
        crawl.wait()


def test_the_spool_of_a_crawl_killed_mid_write_is_fed(tmp_path):
    site = _site("killed")
    with SiteServer(site) as server, _history("sqlite", tmp_path) as reach:
        _audited(reach.db, server.origin)
        reach.down()
        slow = {"DOWNLOAD_DELAY": 0.2, "CONCURRENT_REQUESTS": 1}
        config = crawl_config(server, reach.db, tmp_path, "planned", **slow)
        spool = _killed_once_spooling(config, tmp_path / "spool", at_least=20_000)
        data = spool.read_bytes()
        spool.write_bytes(data[:-7])  # its last fetch cut mid-write, its gzip member unended
        with spool.open("rb") as stream:
            whole = [r for r in read_crawl_log(stream, "warc") if isinstance(r, FetchRecord)]
        reach.up()
        back = run_crawl(server, reach.db, tmp_path)
        rows = _log_rows(reach.db)

    assert 4 <= len(whole) < len(site.pages)
    assert back.stats["auditor/fed/recorded"] == len(whole)
    assert back.stats["auditor/fed/problems"] == 1  # the cut record, named and skipped
    assert not spool.exists()
    spooled = {r.url for r in whole}
    fetched = {server.origin + p for p in back.pages}
    assert rows == {u: (u in spooled) + (u in fetched) for u in spooled | fetched}
