"""A fleet's reports are drawn by a pool of processes beside the audits: the loop that
collects results is not held by them, the reports pending are bounded, and a fleet draws
only the reports ``--reports`` asks for."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.server import SiteServer
from auditor.errors import HistoryError
from auditor.fleet.reports import DRAWING_NICENESS, ReportWriter, draw_report
from auditor.history import History
from auditor.report import ReportData
from auditor.sampler import SampleOptions
from tests.fleet.servers import simulated

QUICK = AuditOptions(sample=SampleOptions(sample=4, delay=0.0), seed=5)


def draw_when_released(data: ReportData, folder: str) -> str:
    """Draw a report once the file ``release`` beside the reports exists (run in a pool
    process: the test holds the drawing back for as long as it likes)."""
    release = Path(folder).parent / "release"
    ends = time.monotonic() + 60
    while not release.exists() and time.monotonic() < ends:
        time.sleep(0.02)
    return draw_report(data, folder)


def niceness_and_draw(data: ReportData, folder: str) -> str:
    """Write the pool process's niceness where the report would be."""
    path = Path(folder) / "niceness"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(os.nice(0)))
    return str(path)


def charts_ready(data: ReportData, folder: str) -> str:
    """Write which kinds of chart the pool process has made already, before any report,
    and which templates it has compiled."""
    from auditor.report import charts
    from auditor.report.site import environment

    path = Path(folder) / "charts"
    path.parent.mkdir(parents=True, exist_ok=True)
    templates = [key[1] for key in environment().cache or {}]
    path.write_text(" ".join([*sorted(charts._kept()), *templates]))
    return str(path)


def cannot_draw(data: ReportData, folder: str) -> str:
    raise RuntimeError(f"no ink for {data.site}")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A history with three audited sites, and their results."""
    folder = tmp_path_factory.mktemp("saved")
    servers = [SiteServer(simulated("accurate-jsonld", n), host=f"127.0.18.{n}") for n in (1, 2, 3)]
    try:
        with History.open(folder / "h.sqlite3") as history:
            results = [audit_site(s.origin, history, QUICK) for s in servers]
    finally:
        for server in servers:
            server.close()
    return folder / "h.sqlite3", results


def test_reports_are_drawn_beside_the_loop_and_no_more_than_the_backlog_wait(saved, tmp_path):
    database, results = saved
    out = tmp_path / "reports"
    with (
        History.open(database) as history,
        ReportWriter(history, out, processes=1, backlog=2, draw=draw_when_released) as writer,
    ):
        writer.add(results[0].site)
        writer.add(results[1].site)  # not drawn yet: the loop went on meanwhile
        assert writer.drawing == 2 and writer.take() == []

        release = out / "release"
        out.mkdir(parents=True, exist_ok=True)
        threading.Timer(1.0, release.write_text, args=("",)).start()
        writer.add(results[2].site)  # the backlog is full: the fleet waits for a report
        assert release.exists()  # so it came back only once the drawing was let go
        writer.drain()
        finished = writer.take()
        assert writer.take() == [] and writer.drawing == 0

    assert sorted(r.site for r in finished) == sorted(r.site for r in results)
    assert writer.written == 3
    for report in finished:
        assert report.path is not None and Path(report.path).is_file()
        assert Path(report.path).parent.parent == out


def test_the_rows_pending_are_bounded_too_but_one_report_always_goes(saved, tmp_path):
    database, results = saved
    out = tmp_path / "reports"
    with History.open(database) as history:
        rows = len(history.latest_entries(results[0].site))
        with ReportWriter(
            history, out, processes=1, backlog_rows=rows, draw=draw_when_released
        ) as writer:
            assert rows > 0
            writer.add(results[0].site)  # as many rows as the budget: it goes
            assert writer.drawing == 1 and writer.drawing_rows == rows

            release = out / "release"
            out.mkdir(parents=True, exist_ok=True)
            threading.Timer(1.0, release.write_text, args=("",)).start()
            writer.add(results[1].site)  # past the budget: waits for the first report
            assert release.exists()
            writer.drain()
            assert len(writer.take()) == 2


def test_the_drawing_processes_yield_the_cpu_to_the_audits(saved, tmp_path):
    database, results = saved
    with (
        History.open(database) as history,
        ReportWriter(history, tmp_path, processes=1, draw=niceness_and_draw) as writer,
    ):
        writer.add(results[0].site)
        writer.drain()
        (finished,) = writer.take()
    assert Path(finished.path).read_text() == str(min(os.nice(0) + DRAWING_NICENESS, 19))


def test_a_pool_started_early_has_its_charts_and_template_ready_before_a_report(saved, tmp_path):
    database, results = saved
    with (
        History.open(database) as history,
        ReportWriter(history, tmp_path, processes=1, draw=charts_ready) as writer,
    ):
        writer.start()
        writer.add(results[0].site)
        writer.drain()
        (finished,) = writer.take()
    assert Path(finished.path).read_text() == "agreement error history lastmod shared site.html"


#: A process started as a drawer, holding an object that says so when torn down.
DRAWER_EXITS = """
import sys
from auditor.fleet import reports

class Torn:
    def __del__(self):
        print("torn down", flush=True)

kept = Torn()
reports._drawer_started(0)
print("drawn", flush=True)
sys.exit(0)
"""


def test_a_drawer_ends_without_tearing_its_interpreter_down():
    ended = subprocess.run(
        [sys.executable, "-c", DRAWER_EXITS], capture_output=True, text=True, timeout=60
    )

    assert ended.returncode == 0, ended.stderr
    assert ended.stdout == "drawn\n"  # no teardown: kept objects are not collected


def test_a_report_that_cannot_be_drawn_comes_back_without_a_file(saved, tmp_path, caplog):
    database, results = saved
    with (
        History.open(database) as history,
        ReportWriter(history, tmp_path, processes=1, draw=cannot_draw) as writer,
    ):
        writer.add(results[0].site)
        writer.drain()
        (finished,) = writer.take()
    assert finished.site == results[0].site and finished.path is None and writer.written == 0
    assert "no report for" in caplog.text and "no ink" in caplog.text


def test_a_history_lost_mid_add_drains_what_was_sent_and_reads_it_no_more(saved, tmp_path):
    """A fleet stopped because its history is unreachable still waits for the reports
    already sent, and drops the one whose data could not be read, without reading again
    (each read would wait out the reconnect window, then fail outside the fleet's stop)."""
    database, results = saved
    with (
        History.open(database) as history,
        ReportWriter(history, tmp_path, processes=1) as writer,
    ):
        writer.add(results[0].site)
        reads = []

        def unreachable(*_: object) -> None:
            reads.append(1)
            raise HistoryError("the connection was lost, and it could not be made again")

        history.runs = unreachable  # type: ignore[method-assign]
        with pytest.raises(HistoryError):
            writer.add(results[1].site)
        writer.drain(queued=False)
        drawn = writer.take()
    assert [d.site for d in drawn] == [results[0].site] and drawn[0].path is not None
    assert len(reads) == 1
