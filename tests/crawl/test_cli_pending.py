"""The crawl loop a new user runs, through the command line on loopback: audits, a plan, a
crawl, ``auditor crawled``, an audit again (SQLite and PostgreSQL).

- A fetch is judged against a walk of the sitemaps made after it: a site that changes
  pages after the plan's walk, lastmod and all, stays trusted.
- A log whose hashes change on every re-fetch (whole-page hashes of pages with a CSRF
  token and a "rendered at" footer) is refused in plain words and condemns nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History

PAGES = 120
EDITED = 31
#: The demo's lastmods are written to the second: steps of the loop a little more apart.
STEP = 1.2


def _site(name: str) -> SimulatedSite:
    """An accurate site living in real time (its pages last changed a day ago or before)."""
    clock = datetime.now(UTC) - timedelta(days=1)
    return SimulatedSite(name, {"pages": BEHAVIOURS["accurate-jsonld"]}, PAGES, seed=5, clock=clock)


def _audit(db: str, origin: str, capsys) -> dict:
    args = ["audit", origin, "--db", db, "--delay", "0", "--sample", "20", "--json"]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def _crawl(origin: str, site: SimulatedSite, tmp_path: Path, name: str, *, whole: bool) -> str:
    """Every page fetched now, as a JSON Lines log: each row's hash of the page's version
    (a main-content hash), or of the whole body as served (``whole``)."""
    lines = []
    with requests.Session() as session:
        for path in sorted(site.pages):
            answer = session.get(origin + path, timeout=10)
            at = datetime.now(UTC)
            digest = (
                hashlib.sha256(answer.content).hexdigest()
                if whole
                else f"v{site.pages[path].version}"
            )
            row = {"url": origin + path, "fetched_at": at.isoformat(), "status": 200}
            lines.append(json.dumps({**row, "content_hash": digest}))
    log = tmp_path / name
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(log)


def _crawled(db: str, log: str, capsys, *, as_json: bool = True) -> dict | str:
    args = ["crawled", "--from", log, "--db", db, *(["--json"] if as_json else [])]
    assert main(args) == 0
    out = capsys.readouterr().out
    return json.loads(out) if as_json else out


def _edit(site: SimulatedSite, count: int) -> list[str]:
    """``count`` pages edited now, their lastmod with them (an accurate site)."""
    now = datetime.now(UTC).replace(microsecond=0)
    edited = sorted(site.pages)[:: PAGES // count][:count]
    for path in edited:
        page = site.pages[path]
        page.modified, page.version = now, page.version + 1
    return edited


def test_pages_edited_after_the_plans_walk_keep_an_accurate_site_trusted(db_url, capsys, tmp_path):
    site = _site("busy")
    with SiteServer(site) as server:
        origin = server.origin
        assert _audit(db_url, origin, capsys)["verdict"] == "trusted"
        assert _audit(db_url, origin, capsys)["verdict"] == "trusted"
        first = _crawled(db_url, _crawl(origin, site, tmp_path, "day1.jsonl", whole=False), capsys)
        assert first["recorded"] == PAGES
        time.sleep(STEP)
        assert main(["plan", origin, "--db", db_url, "--format", "text"]) == 0  # walks: 02:00
        capsys.readouterr()
        time.sleep(STEP)
        edited = _edit(site, EDITED)  # the site edits pages, lastmod advancing with them
        time.sleep(STEP)
        log = _crawl(origin, site, tmp_path, "day2.jsonl", whole=False)
        second = _crawled(db_url, log, capsys)
        # the plan's walk came before the edits: nothing to weigh the fetches against yet
        assert (second["changed"], second["unchanged"]) == (EDITED, PAGES - EDITED)
        assert second["pending"] == PAGES
        time.sleep(STEP)
        third = _audit(db_url, origin, capsys)

    assert third["verdict"] == "trusted", third["reasons"]
    (segment,) = third["segments"]
    crawled = segment["crawled"]
    assert crawled["compared"] == PAGES and crawled["pending"] == 0
    assert crawled["changed"] == crawled["lastmod_advanced"] == crawled["both"] == len(edited)
    with History.open(db_url) as history:  # the audit's walk resolved them for good
        counts = history.crawl_counts(origin, datetime.now(UTC) - timedelta(hours=1))
    assert [(c.compared, c.both, c.pending) for c in counts.values()] == [(PAGES, EDITED, 0)]


def test_whole_page_hashes_that_change_on_every_fetch_are_refused_in_plain_words(
    db_url, capsys, tmp_path
):
    site = _site("noisy")
    with SiteServer(site) as server:
        origin = server.origin
        assert _audit(db_url, origin, capsys)["verdict"] == "trusted"
        _crawled(db_url, _crawl(origin, site, tmp_path, "one.jsonl", whole=True), capsys)
        log = _crawl(origin, site, tmp_path, "two.jsonl", whole=True)  # nothing changed
        text = _crawled(db_url, log, capsys, as_json=False)
        assert isinstance(text, str)
        again = _audit(db_url, origin, capsys)

    sentence = (
        f"the hashes of {PAGES} of {PAGES} re-fetched pages differ: they look like whole-page"
        " hashes with per-request content; not counted as evidence — send bodies, or hash the"
        " main content as docs/frontier.md shows"
    )
    assert sentence in text
    assert again["verdict"] == "trusted", again["reasons"]
    (segment,) = again["segments"]
    assert segment["crawled"] is None or segment["crawled"]["changed"] == 0
    with History.open(db_url) as history:
        site_id = history.site_ids()[origin]
        states = history.crawl_states(site_id, [origin + p for p in site.pages])
    assert {(s.intervals, s.changes) for s in states.values()} == {(0, 0)}  # no rate either


def _recipe_crawl(origin: str, site: SimulatedSite, tmp_path: Path, name: str) -> str:
    """Every page fetched by the Python recipe of docs/frontier.md, "What to hash"."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "frontier.md").read_text("utf-8")
    (recipe,) = re.findall(r"```python\n(.+?)\n```", page, re.DOTALL)
    code = compile(recipe, "docs/frontier.md", "exec")
    path = tmp_path / name
    with path.open("w", encoding="utf-8") as log:
        for p in sorted(site.pages):
            exec(code, {"url": origin + p, "log": log})
    return str(path)


def test_the_main_content_hash_frontier_md_shows_is_counted(db_url, capsys, tmp_path):
    site = _site("recipe")
    with SiteServer(site) as server:
        origin = server.origin
        _audit(db_url, origin, capsys)
        _crawled(db_url, _recipe_crawl(origin, site, tmp_path, "one.jsonl"), capsys)
        again = _crawled(db_url, _recipe_crawl(origin, site, tmp_path, "two.jsonl"), capsys)
        edited = _edit(site, EDITED)
        time.sleep(STEP)
        third = _crawled(db_url, _recipe_crawl(origin, site, tmp_path, "three.jsonl"), capsys)

    # the pages' tokens, render times and trending words do not reach the hash
    assert (again["unchanged"], again["changed"], again["refused"]) == (PAGES, 0, 0)
    assert (third["changed"], third["refused"]) == (len(edited), 0)
