"""Re-verification that does not re-download what did not change (issue 12, point 5).

A site audited twice into one history: the second audit asks for every sitemap file
with the previous answer's validators, and a 304 reuses the file's entries from the
history. The server's own log shows what was asked and what was sent: no sitemap body
twice, one robots.txt per audit.
"""

from __future__ import annotations

import contextlib
import io
import json

import pandas as pd
import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.cli import main
from auditor.history import History
from auditor.http import PAGE_ACCEPT, HttpOptions
from auditor.models import SitemapFile
from auditor.sampler import SampleOptions
from auditor.scorer.result import AuditResult
from auditor.walker import WalkOptions
from tests.conditional import SITEMAP_PATHS, ConditionalServer, make_site, post_entries, touch_later

OPTIONS = AuditOptions(
    walk=WalkOptions(http=HttpOptions(timeout=5, retries=0)),
    sample=SampleOptions(
        sample=30, delay=0.0, http=HttpOptions(timeout=5, retries=0, accept=PAGE_ACCEPT)
    ),
    seed=3,
)
POSTS = 24


@pytest.fixture
def site(tmp_path):
    return make_site(tmp_path / "site", posts=POSTS)


def _twice(server: ConditionalServer, db, between=None) -> tuple[AuditResult, AuditResult, int]:
    """Audit the site twice into ``db``; the results and where the second began in the log."""
    with History.open(db) as history:
        first = audit_site(server.origin, history, OPTIONS)
        if between is not None:
            between()
        mark = len(server.answers)
        second = audit_site(server.origin, history, OPTIONS)
    return first, second, mark


def _files(db, run_id: int) -> dict[str, SitemapFile]:
    with History.open(db) as history:
        return {f["url"].rsplit("/", 1)[1]: SitemapFile(**f) for f in history.sitemap_files(run_id)}


def _robots(server: ConditionalServer, start: int, end: int | None = None) -> int:
    return sum(a.path == "/robots.txt" for a in server.answers[start:end])


def test_an_unchanged_site_gets_304s_and_nothing_is_downloaded_twice(site, tmp_path):
    db = tmp_path / "history.sqlite3"
    with ConditionalServer(root=site) as server, History.open(db) as history:
        first = audit_site(server.origin, history, OPTIONS)
        entries_before = history.latest_entries(server.origin)
        mark = len(server.answers)
        second = audit_site(server.origin, history, OPTIONS)
        entries_after = history.latest_entries(server.origin)

    again = server.sitemap_answers(mark)
    for path in SITEMAP_PATHS:
        assert [a.status for a in again[path]] == [304], path
        assert again[path][0].if_none_match and again[path][0].if_modified_since
    bodies = [a.path for a in server.answers if a.path in SITEMAP_PATHS and a.body_bytes]
    assert sorted(bodies) == sorted(SITEMAP_PATHS)  # each sitemap body was sent once in all
    assert _robots(server, 0, mark) == _robots(server, mark) == 1  # one robots.txt an audit

    pd.testing.assert_frame_equal(entries_after, entries_before)
    assert second.verdict == first.verdict
    assert [(g.sitemap, g.verdict) for g in second.segments] == [
        (g.sitemap, g.verdict) for g in first.segments
    ]
    assert "trusted" in {g.verdict for g in first.segments}  # posts: the evidence agrees
    assert second.inventory == {**first.inventory, "reused": 4} and first.inventory["reused"] == 0
    assert second.problems == first.problems and len(first.problems) >= 5
    assert second.dispersion["flags"] == first.dispersion["flags"]
    files = _files(db, second.run_id)
    assert {name for name, f in files.items() if f.reused} == {p[1:] for p in SITEMAP_PATHS}
    assert files["posts.xml.gz"].status == 304 and files["posts.xml.gz"].bytes_read == 0


def test_a_changed_child_is_the_only_file_read_again(site, tmp_path):
    def change_posts() -> None:
        (site / "posts.xml").write_text(post_entries(POSTS + 1), encoding="utf-8")
        touch_later(site / "posts.xml")

    with ConditionalServer(root=site) as server:
        first, second, mark = _twice(server, tmp_path / "h.sqlite3", change_posts)
        again = server.sitemap_answers(mark)

    read = sorted(p for p, found in again.items() if found[0].status == 200)
    assert read == ["/posts.xml.gz"]
    assert {again[p][0].status for p in SITEMAP_PATHS if p != "/posts.xml.gz"} == {304}
    assert second.inventory["urls"] == first.inventory["urls"] + 1
    assert second.inventory["reused"] == 3


def test_a_server_that_ignores_validators_is_audited_as_today(site, tmp_path):
    with ConditionalServer(root=site, mode="ignore") as server:
        first, second, mark = _twice(server, tmp_path / "h.sqlite3")
        again = server.sitemap_answers(mark)
    with ConditionalServer(root=site) as honouring:
        _, reused, _ = _twice(honouring, tmp_path / "other.sqlite3")

    assert {again[p][0].status for p in SITEMAP_PATHS} == {200}
    assert all(again[p][0].if_none_match for p in SITEMAP_PATHS)  # asked, and ignored
    assert second.inventory["reused"] == 0 and second.verdict == first.verdict
    # the same audit as where the 304s were honoured, sites apart
    assert (reused.verdict, reused.problems) == (second.verdict, _moved(second, honouring))
    assert {k: v for k, v in reused.inventory.items() if k != "reused"} == {
        k: v for k, v in second.inventory.items() if k != "reused"
    }


def _moved(result: AuditResult, to: ConditionalServer) -> tuple[dict[str, str], ...]:
    """The result's problems with its site's origin replaced by ``to``'s."""
    return tuple(
        {k: v.replace(result.site, to.origin) for k, v in problem.items()}
        for problem in result.problems
    )


def test_the_audit_command_says_what_was_reused(site, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # reports land in ./reports
    db = str(tmp_path / "history.sqlite3")
    command = ["audit", "--db", db, "--delay", "0", "--sample", "6", "--json"]
    with ConditionalServer(root=site) as server:
        results = []
        for _ in range(2):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                assert main([*command, server.origin]) == 0
            results.append(json.loads(printed.getvalue()))
    assert [r["inventory"]["reused"] for r in results] == [0, 4]
    assert _robots(server, 0) == 2
