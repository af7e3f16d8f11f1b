"""A small fleet's fixed cost is paid once: the local cluster's workers are forked with
the audit's modules imported (once, by the server they are forked from), the same
workers audit every site, the command starts that server before its own imports, and a
small first fleet starts its report pool before its sites end."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.audit import AuditOptions
from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.fleet import audit_fleet
from auditor.fleet.forkserver import WORKER_MODULES
from auditor.fleet.heap import FLEET_THRESHOLDS
from auditor.fleet.reports import DRAWING_NICENESS, ReportWriter
from auditor.history import History
from auditor.sampler import SampleOptions
from auditor.scorer.result import AuditResult
from tests.fleet.servers import simulated

PROJECT = str(Path(__file__).resolve().parents[2])
QUICK = AuditOptions(sample=SampleOptions(sample=4, delay=0.0), seed=5)


@pytest.fixture
def origins():
    servers = [
        SiteServer(simulated("accurate-jsonld", n), host=f"127.0.36.{n}") for n in range(1, 7)
    ]
    yield [s.origin for s in servers]
    for server in servers:
        server.close()


def test_the_local_workers_are_forked_with_the_audit_imported_and_audit_every_site(
    origins, tmp_path
):
    from auditor.fleet.cluster import local_client

    with local_client(4) as client, History.open(tmp_path / "h.sqlite3") as history:
        first = client.run(  # (a lambda goes by value: it imports nothing of auditor)
            lambda: (os.getpid(), os.getppid(), [m for m in WORKER_MODULES if m not in sys.modules])
        )
        # before any site: each worker has the audit's modules, imported by the one
        # process they were forked from (not this one: spawned workers are its children)
        assert len(first) == 2
        assert all(missing == [] for _, _, missing in first.values()), first
        parents = {parent for _, parent, _ in first.values()}
        assert len(parents) == 1 and parents != {os.getpid()}
        # their collector settled as Dask started them (auditor.fleet.heap, their preload)
        settled = client.run(lambda: (gc.get_threshold(), gc.get_freeze_count() > 0))
        assert set(settled.values()) == {(FLEET_THRESHOLDS, True)}, settled

        outcomes = list(audit_fleet(origins, history, QUICK, client=client))

        assert sorted(o.site for o in outcomes if isinstance(o, AuditResult)) == sorted(origins)
        sent = client.run(_sites_sent)  # each worker ran some of them
        assert sum(sent.values()) == len(origins) and min(sent.values()) >= 2, sent
        after = client.run(os.getpid)
        assert {a: p for a, (p, _, _) in first.items()} == after  # none started again


def _sites_sent() -> int:
    from auditor.fleet.runners import SiteRunner

    return SiteRunner.sites_sent


#: The audit command, its worker server's start recorded then stopped: were the
#: command's heavy modules imported yet?
ORDER = """
import sys
import auditor.fleet.forkserver as forkserver
def started():
    print("audit imported:", "auditor.audit" in sys.modules, flush=True)
    raise SystemExit(0)
forkserver.start_worker_server = started
from auditor.cli import main
main(sys.argv[1:])
print("no worker server", flush=True)
"""


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--sites", "LIST"], "audit imported: False"),  # a fleet: started first
        (["http://127.0.0.1:9/", "http://127.0.0.2:9/"], "audit imported: False"),
        (["http://127.0.0.1:9/"], "no worker server"),  # one site: no fleet
        (["--cluster", "tls://127.0.0.1:9", "--sites", "LIST"], "no worker server"),  # usage
    ],
)
def test_a_local_fleet_starts_its_workers_server_before_its_own_imports(tmp_path, extra, said):
    listing = tmp_path / "sites.txt"
    listing.write_text("http://127.0.0.1:9/\nhttp://127.0.0.2:9/\n")
    args = [str(listing) if a == "LIST" else a for a in extra]
    done = subprocess.run(
        [sys.executable, "-c", ORDER, "audit", *args, "--db", str(tmp_path / "h.sqlite3")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": PROJECT},
    )
    assert said in done.stdout, done.stdout + done.stderr[-2000:]


def test_a_small_first_fleet_starts_its_report_pool_first_at_its_own_priority(
    origins, tmp_path, monkeypatch, capsys
):
    """Its results all come at its end, with no audit left to make way for: a pool
    started with the first report would spend its imports after them, and drawers at
    nice +10 wait behind the machine's other work. A fleet larger than its sites in
    flight, or one that will draw no report, starts the pool with its first report and
    draws at nice +10, as before."""
    events: list[tuple[str, int]] = []
    start, add = ReportWriter.start, ReportWriter.add

    def niceness(writer: ReportWriter) -> int:  # (a pool at nice +10 before it could be set)
        return int(getattr(writer, "niceness", DRAWING_NICENESS))

    monkeypatch.setattr(
        ReportWriter, "start", lambda self: (events.append(("start", niceness(self))), start(self))
    )
    monkeypatch.setattr(
        ReportWriter,
        "add",
        lambda self, site: (events.append(("add", niceness(self))), add(self, site)),
    )
    monkeypatch.chdir(tmp_path)
    fleet = ["audit", *origins, "--db", "h.sqlite3", "--delay", "0.02", "--sample", "4"]

    assert main(fleet) == 0  # a first fleet: every verdict is new, every report drawn
    assert events == [("start", 0)] + [("add", 0)] * len(origins)
    events.clear()
    assert main([*fleet, "--reports", "all"]) == 0
    assert events == [("start", 0)] + [("add", 0)] * len(origins)
    events.clear()
    assert main([*fleet, "--reports", "changed"]) == 0  # no site is new: none expected
    assert ("start", 0) not in events
    events.clear()
    assert main([*fleet, "--reports", "all", "--concurrency", "3"]) == 0  # not all at once
    assert events == [("add", DRAWING_NICENESS)] * len(origins)
    capsys.readouterr()
