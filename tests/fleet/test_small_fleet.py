"""A small fleet's fixed cost is paid once: the local cluster's workers are forked with
the audit's modules imported (once, by the server they are forked from), the same
workers audit every site, and the command starts that server before its own imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.audit import AuditOptions
from auditor.demo.server import SiteServer
from auditor.fleet import audit_fleet
from auditor.fleet.forkserver import WORKER_MODULES
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

        outcomes = list(audit_fleet(origins, history, QUICK, client=client))

        assert sorted(o.site for o in outcomes if isinstance(o, AuditResult)) == sorted(origins)
        executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
        assert sum(executed.values()) >= len(origins) and min(executed.values()) >= 2, executed
        after = client.run(os.getpid)
        assert {a: p for a, (p, _, _) in first.items()} == after  # none started again


#: The audit command, its worker server's start recorded then stopped: were the
#: command's heavy modules imported yet?
ORDER = """
import sys
import auditor.fleet.forkserver as forkserver
def started():
    print("audit imported:", "auditor.audit" in sys.modules, flush=True)
    raise SystemExit(0)
forkserver.start_worker_server = started
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
