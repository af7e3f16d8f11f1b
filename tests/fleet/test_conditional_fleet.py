"""A fleet re-verifies without re-downloading: the previous run's files reach the workers
(who never open the history) and every unchanged sitemap file is answered 304."""

from __future__ import annotations

from auditor.audit import AuditOptions
from auditor.fleet import audit_fleet
from auditor.history import History
from auditor.http import PAGE_ACCEPT, HttpOptions
from auditor.sampler import SampleOptions
from auditor.scorer.result import AuditResult
from auditor.walker import WalkOptions
from tests.conditional import SITEMAP_PATHS, ConditionalServer, make_site

OPTIONS = AuditOptions(
    walk=WalkOptions(http=HttpOptions(timeout=5, retries=0)),
    sample=SampleOptions(
        sample=6, delay=0.0, http=HttpOptions(timeout=5, retries=0, accept=PAGE_ACCEPT)
    ),
    seed=5,
)


def test_a_fleet_run_again_gets_304s_on_its_workers(tmp_path):
    servers = [ConditionalServer(root=make_site(tmp_path / f"site{i}")) for i in range(2)]
    origins = [s.origin for s in servers]
    try:
        with History.open(tmp_path / "fleet.sqlite3") as history:
            first = list(audit_fleet(origins, history, OPTIONS, concurrency=2))
            marks = [len(s.answers) for s in servers]
            second = list(audit_fleet(origins, history, OPTIONS, concurrency=2))
    finally:
        for server in servers:
            server.close()

    assert all(isinstance(r, AuditResult) for r in first + second), first + second
    assert sorted(r.inventory["reused"] for r in second) == [4, 4]  # type: ignore[union-attr]
    before = {r.site: r for r in first}
    for result in second:
        assert result.verdict == before[result.site].verdict  # type: ignore[union-attr]
    for server, mark in zip(servers, marks, strict=True):
        again = server.sitemap_answers(mark)
        assert {again[p][0].status for p in SITEMAP_PATHS} == {304}
        robots = [a.path == "/robots.txt" for a in server.answers]
        assert sum(robots[:mark]) == sum(robots[mark:]) == 1
