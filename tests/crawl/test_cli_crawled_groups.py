"""The crawler's fetches reach each group of a sitemap split into groups, through the
command line (SQLite and PostgreSQL): ``auditor crawled`` feeds a log of thousands of
fetches, ``auditor plan`` reads each group's, and the next ``auditor audit`` shows and
weighs each group's own.

The blog (:mod:`tests.crawl.blog`) lists its posts, whose lastmod is right on the first
audit, beside list pages stamped with the build moment. Between two fetches of every page
it deploys again: a third of the posts edited without moving their lastmod, every list
page re-stamped without a change.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.cli import main
from tests.crawl.blog import Blog
from tests.loopback import LoopbackServer

#: The plan's reasons of a fetch planned by rate, as for any segment not trusted.
BY_RATE = {"rate", "never-fetched", "new-url", "retry"}


def _run(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def _audit(capsys, db_url: str, origin: str, sample: int) -> dict:
    out = _run(capsys, "audit", origin, "--db", db_url, "--delay", "0", "--sample", str(sample),
               "--json")  # fmt: skip
    return json.loads(out)


def _crawled(capsys, db_url: str, path: Path, lines: list[str]) -> dict:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return json.loads(_run(capsys, "crawled", "--from", str(path), "--db", db_url, "--json"))


def _plan(capsys, db_url: str, origin: str) -> list[dict]:
    """The plan's fetches due within a week (a copy fetched moments ago is due later)."""
    out = _run(capsys, "plan", origin, "--db", db_url, "--budget", "100000", "--horizon", "7",
               "--format", "jsonl")  # fmt: skip
    return [json.loads(line) for line in out.splitlines()]


def _posts_and_lists(result: dict) -> tuple[dict, dict]:
    groups = [s for s in result["segments"] if "group" in s]
    posts = [s for s in groups if s["group"]["pattern"].startswith("/YYYY")]
    lists = [s for s in groups if "/tags/*" in s["group"]["pattern"]]
    assert len(posts) == len(lists) == 1, [s["group"] for s in groups]
    return posts[0], lists[0]


def test_each_group_has_its_crawl_counts_in_the_plan_and_the_next_audit(db_url, capsys, tmp_path):
    blog = Blog()
    blog.build(tmp_path / "v0", 0)
    urls, edited = blog.posts + len(blog.list_paths()), blog.edited()
    with LoopbackServer(root=tmp_path / "v0") as server:
        origin = server.origin
        posts, lists = _posts_and_lists(_audit(capsys, db_url, origin, 60))
        assert posts["verdict"] == "trusted" and lists["verdict"] != "trusted"
        day1 = datetime.now(UTC)
        log = blog.crawl_log(tmp_path / "v0", origin, day1)
        assert _crawled(capsys, db_url, tmp_path / "day1.jsonl", log)["recorded"] == urls
        deploy = day1.replace(microsecond=0) + timedelta(seconds=2)  # after the fetch's second
        blog.build(tmp_path / "v1", 1, deploy.strftime("%Y-%m-%dT%H:%M:%SZ"))
        time.sleep(max((deploy - datetime.now(UTC)).total_seconds(), 0) + 1.1)
        server.root = tmp_path / "v1"  # the deploy
        _plan(capsys, db_url, origin)  # walks again: it proves the list pages' lastmod moved
        log = blog.crawl_log(tmp_path / "v1", origin, datetime.now(UTC))
        summary = _crawled(capsys, db_url, tmp_path / "day2.jsonl", log)
        assert (summary["changed"], summary["unchanged"]) == (len(edited), urls - len(edited))
        assert summary["pending"] == blog.posts  # the posts' lastmod waits for a walk after
        planned = _plan(capsys, db_url, origin)  # its walk weighs them
        second = _audit(capsys, db_url, origin, 4)

    # the plan: the posts' trust is contradicted by their crawl, planned by rate from now on
    on_posts = [f for f in planned if f["url"].removeprefix(origin).startswith("/2026/")]
    assert on_posts and {f["verdict"] for f in on_posts} == {"untrusted"}
    assert {f["reason"] for f in on_posts} <= BY_RATE
    assert {f["url"].removeprefix(origin) for f in on_posts if f["reason"] == "rate"} >= edited
    # the next audit: each group's own crawl counts, shown and weighed
    posts, lists = _posts_and_lists(second)
    assert posts["crawled"] == {"compared": blog.posts, "changed": len(edited),
                                "lastmod_advanced": 0, "both": 0,
                                "with_date_modified": 0, "agree": 0, "pending": 0}  # fmt: skip
    assert lists["crawled"]["compared"] == lists["crawled"]["lastmod_advanced"] == urls - blog.posts
    assert lists["crawled"]["changed"] == 0
    assert posts["compared"] >= blog.posts and lists["compared"] >= urls - blog.posts
    assert posts["verdict"] == "untrusted" and "changed-without-lastmod" in posts["reasons"]
    assert lists["verdict"] == "untrusted" and "lastmod-without-change" in lists["reasons"]
    assert posts["crawled_earlier"] is None  # nothing was crawled before the first audit
    assert second["changes"]["compared"] >= urls
    # ... and the site's change figures say how many of them the crawl gave (issue 32)
    from_crawl = second["changes"]["from_crawl"]
    assert (from_crawl["compared"], from_crawl["changed"]) == (urls, len(edited))
    assert second["changes"]["compared"] - from_crawl["compared"] <= 4  # the panel's own
    _run(capsys, "report", origin, "--db", db_url, "--out", str(tmp_path / "out"))
    (page,) = (tmp_path / "out").glob("*/index.html")  # the site's report
    said = " ".join(page.read_text(encoding="utf-8").split())
    assert f"{urls:,} came from the team's crawl" in said
