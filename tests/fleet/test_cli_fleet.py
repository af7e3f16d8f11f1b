"""Fleets from the command line: many sites, a crawl list, JSON Lines as sites finish, a
summary; Ctrl-C mid-fleet keeps exactly the finished runs."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.history import History
from auditor.sampler import SampleOptions
from tests.fleet.servers import HangingServer, simulated

PROJECT = str(Path(__file__).resolve().parents[2])


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # reports land in ./reports
    return str(tmp_path / "history.sqlite3")


def _make_due(db: str) -> None:
    aged = (datetime.now(UTC) - timedelta(days=60)).isoformat(timespec="microseconds")
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE runs SET started_at = ?, finished_at = ?",
            (aged, aged),
        )
    conn.close()


def test_audit_of_a_crawl_list_streams_json_lines_and_sums_up(db, tmp_path, capsys):
    servers = [
        SiteServer(simulated("accurate-jsonld", 1), host="127.0.12.1"),
        SiteServer(simulated("generation-time", 2), host="127.0.12.2"),
    ]
    listing = tmp_path / "sites.txt"
    listing.write_text(f"# two sites, one twice\n{servers[1].origin}\n{servers[1].origin}/\n")
    try:
        code = main(
            ["audit", servers[0].origin, "--sites", str(listing), "--db", db, "--json",
             "--delay", "0.05", "--sample", "6", "--concurrency", "2"]
        )  # fmt: skip
        out, err = capsys.readouterr()
    finally:
        for server in servers:
            server.close()

    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert sorted(r["site"] for r in lines) == sorted(s.origin for s in servers)
    assert {r["verdict"] for r in lines} <= {"trusted", "untrusted", "inconclusive"}
    assert all(Path(r["report"]).is_file() for r in lines)  # first runs: new verdicts
    assert "2 of 2 sites done" in err and "0 failed" in err
    assert err.count("no --contact given") == 1  # said once, for the whole fleet
    assert "reports: 2 drawn (--reports changed" in err
    assert "fleet index: reports/index.html" in err and Path("reports/index.html").is_file()
    with History.open(db) as history:
        assert {r.site for r in history.runs()} == {s.origin for s in servers}


def _pages_served(server: SiteServer) -> int:
    """Requests a site's server answered for its pages (robots.txt and sitemaps apart)."""
    return sum(
        not (path == "/robots.txt" or (path.startswith("/sitemap") and path.endswith(".xml")))
        for path in server.requests
    )


def test_progress_lines_and_the_summary_count_the_pages_fetched(db, capsys):
    servers = [
        SiteServer(simulated(kind, n), host=f"127.0.18.{n}")
        for n, kind in enumerate(("accurate-jsonld", "generation-time", "no-lastmod"), 1)
    ]
    try:
        code = main(
            ["audit", *(s.origin for s in servers), "--db", db, "--delay", "0.05",
             "--sample", "6", "--concurrency", "2", "--contact", "mailto:ops@example.org"]
        )  # fmt: skip
        out, err = capsys.readouterr()
        served = sum(_pages_served(s) for s in servers)
    finally:
        for server in servers:
            server.close()

    assert code == 0
    # plain lines (stderr is no terminal here), one per finished site
    lines = [line for line in err.splitlines() if " sites done, " in line]
    assert len(lines) == 3, err
    counts = [int(re.search(r", (\d+) pages? fetched, ", line)[1]) for line in lines]
    assert counts == sorted(counts) and counts[-1] == served
    assert "3 of 3 sites done, 0 in flight" in lines[-1]
    assert "no --contact given" not in err
    assert served >= 12  # each site's pages were asked for (sample 6; no-lastmod fetches fewer)
    assert "3 of 3 sites done: " in out and f"; {served} pages fetched in all" in out


def test_ctrl_c_mid_fleet_keeps_the_finished_runs_and_reverify_picks_up_the_rest(db, capsys):
    release = threading.Event()
    release.set()
    servers = [SiteServer(simulated("accurate-jsonld", n), host=f"127.0.13.{n}") for n in (1, 2, 3)]
    hanging = HangingServer(simulated("accurate-jsonld", 4), host="127.0.13.4", release=release)
    servers.append(hanging)  # in flight when the first site is printed, whatever the timing
    origins = [s.origin for s in servers]
    quick = AuditOptions(sample=SampleOptions(sample=6, delay=0.0), seed=3)
    try:
        with History.open(db) as history:
            for origin in origins:
                audit_site(origin, history, quick)
        _make_due(db)
        release.clear()
        child = subprocess.Popen(
            [sys.executable, "-m", "auditor", "reverify", "--db", db, "--json", "--delay",
             "0.3", "--sample", "6", "--concurrency", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": PROJECT},
            start_new_session=True,  # its own process group, as a terminal's job is
        )  # fmt: skip
        assert child.stdout is not None
        first = child.stdout.readline()  # the first site is done: interrupt the rest
        os.killpg(child.pid, signal.SIGINT)
        rest, err = _ended(child, timeout=120)  # an interrupted cluster winds down
        release.set()
        printed = [json.loads(line)["site"] for line in (first + rest).splitlines()]

        assert child.returncode == 130, err
        assert "interrupted" in err
        with History.open(db) as history:
            rerun = {r.site for r in history.runs() if r.run_id > len(origins)}
        assert printed and set(printed) <= rerun
        assert hanging.origin not in rerun  # in flight: nothing of it was saved
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            counts = dict(conn.execute(
                "SELECT s.origin, count(*) FROM runs r JOIN sites s ON s.id = r.site_id "
                "GROUP BY s.origin"
            ).fetchall())  # fmt: skip
        conn.close()
        assert counts == {o: 2 if o in rerun else 1 for o in origins}

        assert main(["reverify", "--db", db, "--json", "--delay", "0", "--sample", "6",
                     "--concurrency", "2"]) == 0  # fmt: skip
        again = [json.loads(line)["site"] for line in capsys.readouterr().out.splitlines()]
        assert sorted(again) == sorted(set(origins) - rerun)  # only what was still due
    finally:
        release.set()
        for server in servers:
            server.close()


def _ended(child: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """The child's stdout and stderr once it ends; not ended within ``timeout``, it is
    killed with its process group (its cluster's workers) and the test fails, saying so."""
    try:
        return child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        _, err = child.communicate(timeout=30)
        pytest.fail(f"the fleet did not end within {timeout:g} s (killed); stderr: {err[-2000:]}")


def test_cluster_runs_the_fleet_on_a_dask_scheduler(db, capsys):
    from distributed import LocalCluster

    servers = [SiteServer(simulated("no-lastmod", n), host=f"127.0.14.{n}") for n in (1, 2)]
    try:
        with LocalCluster(
            n_workers=1, threads_per_worker=2, host="127.0.0.1", dashboard_address="127.0.0.1:0"
        ) as cluster:
            code = main(
                ["audit", *(s.origin for s in servers), "--db", db, "--delay", "0",
                 "--sample", "4", "--cluster", cluster.scheduler_address]
            )  # fmt: skip
        out = capsys.readouterr().out
        served = sum(_pages_served(s) for s in servers)
    finally:
        for server in servers:
            server.close()
    assert code == 0
    assert sorted(out.splitlines()[:2]) == sorted(f"{s.origin}: no-lastmod" for s in servers)
    assert "2 of 2 sites done: 2 no-lastmod; 0 failed" in out
    assert served > 0 and f"; {served} pages fetched in all" in out  # counted on the cluster too


def test_no_site_or_a_bad_crawl_list_line_is_a_usage_error(db, tmp_path, capsys):
    assert main(["audit", "--db", db]) == 2
    assert "no site to audit" in capsys.readouterr().err
    listing = tmp_path / "sites.txt"
    listing.write_text("example.com\n\nftp://example.org/\n")
    assert main(["audit", "--sites", str(listing), "--db", db]) == 2
    assert "sites.txt:3: not an http(s) URL" in capsys.readouterr().err
    assert not Path(db).exists()  # refused before the history was touched


def test_sigterm_mid_fleet_exits_143_and_keeps_the_finished_site(db):
    release = threading.Event()  # the second site is in flight until the end
    servers = [
        SiteServer(simulated("no-lastmod", 1), host="127.0.17.1"),
        HangingServer(simulated("no-lastmod", 2), host="127.0.17.2", release=release),
    ]
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "auditor", "audit", *(s.origin for s in servers), "--db", db,
             "--json", "--delay", "0.5", "--sample", "4", "--concurrency", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": PROJECT},
        )  # fmt: skip
        assert child.stdout is not None
        done = json.loads(child.stdout.readline())["site"]
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=60)
    finally:
        release.set()
        for server in servers:
            server.close()
    assert child.returncode == 143, err
    with History.open(db) as history:
        assert [r.site for r in history.runs()] == [done]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the drop
@pytest.mark.parametrize(
    ("number", "raised"),
    [(signal.SIGTERM, "_Terminated"), (signal.SIGINT, "KeyboardInterrupt")],
)
def test_a_signal_whose_raise_a_finalizer_dropped_still_stops_the_fleet(
    number: signal.Signals, raised: str
) -> None:
    """A SIGTERM or a Ctrl-C handled while a finalizer or a GC callback runs (a Dask
    future let go; distributed's GC diagnosis, as a CI run once met) has its exception
    printed and dropped by Python; the fleet's loop still sees it."""
    from auditor.cli import fleet

    expected = getattr(fleet, raised, None) or KeyboardInterrupt

    class LetGo:
        def __del__(self) -> None:
            signal.raise_signal(number)

    with fleet._signals() as got:
        try:
            thing = LetGo()
            del thing  # the handler runs inside __del__, or just after it
        except expected:
            pass
        assert got == [number]
        with pytest.raises(expected):
            fleet._stop_if_signalled(got)
