"""A sitemap that mixes two behaviours, audited twice through ``auditor audit``: trust is
never earned on half of it.

The site is built as Hexo builds a blog (hexo-generator-sitemap, one sitemap of every
page): posts whose lastmod is each post's own ``updated`` date (right, and stated again
by their JSON-LD ``dateModified``), beside the home page, pagination, tag and category
pages whose lastmod is the build moment (moved by every deploy, their content not).
"""

from __future__ import annotations

import contextlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path

from auditor.cli import main
from auditor.crawl.record import record_fetches
from auditor.history import History
from tests.audit.run import audit_json
from tests.crawl.sites import crawl
from tests.history.conftest import backend, db_url
from tests.loopback import LoopbackServer

__all__ = ["backend", "db_url"]  # the history fixtures: every test on SQLite and PostgreSQL

POSTS = 60
TAGS, CATEGORIES, PAGES = 24, 12, 3
BUILDS = ("2026-06-01T10:00:00Z", "2026-11-02T10:00:00Z")
EDITED = range(0, POSTS, 12)  # posts edited between the two builds


def _post_date(i: int, build: int) -> str:
    day = 1 + i % 27
    if build and i in EDITED:
        return f"2026-10-{day:02d}T08:00:00Z"
    return f"2026-0{1 + i % 5}-{day:02d}T08:00:00Z"


def _page(title: str, text: str, date: str | None = None) -> str:
    data = ""
    if date is not None:
        data = (
            '<script type="application/ld+json">{"@type": "BlogPosting", '
            f'"headline": "{title}", "datePublished": "2025-12-01T08:00:00Z", '
            f'"dateModified": "{date}"}}</script>'
        )
    return (
        f"<html><head><title>{title}</title>{data}</head><body><nav><a href='/'>Home</a>"
        f"</nav><main><article><h1>{title}</h1><p>{text}</p></article></main>"
        "<footer>Powered by Hexo</footer></body></html>"
    )


def build_site(root: Path, build: int) -> None:
    """One build of the blog: its pages and its sitemap (``build`` 0 or 1)."""
    urls = []
    for i in range(POSTS):
        path = f"/2026/0{1 + i % 5}/{1 + i % 27:02d}/post-{i}.html"
        date = _post_date(i, build)
        edit = " It was updated with a new paragraph." if build and i in EDITED else ""
        text = f"Post {i} tells a story of its own, sentence after sentence.{edit}"
        _write(root, path, _page(f"Post {i}", text, date))
        urls.append((path, date))
    lists = ["/index.html", *(f"/page/{n}/index.html" for n in range(2, 2 + PAGES))]
    lists += [f"/tags/tag-{j}.html" for j in range(TAGS)]
    lists += [f"/categories/cat-{j}.html" for j in range(CATEGORIES)]
    for path in lists:
        _write(root, path, _page(path, f"A list of posts under {path}, as it always was."))
        urls.append((path, BUILDS[build]))
    body = "".join(
        f"<url><loc>{{{{origin}}}}{path}</loc><lastmod>{date}</lastmod></url>"
        for path, date in urls
    )
    sitemap = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
    _write(root, "/sitemap.xml", sitemap)


def _write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def _audit(origin: str, db: str) -> dict:
    return audit_json(origin, db, 60)


def _groups(result: dict) -> dict[str, dict]:
    return {s["group"]["pattern"]: s for s in result["segments"] if "group" in s}


def test_posts_trusted_lists_not_and_never_the_whole_file(tmp_path, db_url):
    for build in (0, 1):
        build_site(tmp_path / f"v{build + 1}", build)
    with LoopbackServer(root=tmp_path / "v1") as server:
        first = _audit(server.origin, db_url)
        server.root = tmp_path / "v2"
        second = _audit(server.origin, db_url)

    assert first["verdict"] in ("partial", "inconclusive")
    assert isinstance(first["seed"], int) and first["seed"] + 1 == second["seed"]  # per run
    assert second["verdict"] == "partial"
    groups = _groups(first)
    posts = next(s for p, s in groups.items() if p.startswith("/YYYY"))
    lists = next(s for p, s in groups.items() if "/tags/*" in p)
    assert posts["group"]["urls"] == POSTS
    assert lists["group"]["urls"] == 1 + PAGES + TAGS + CATEGORIES
    assert lists["group"]["basis"] == "lastmod"  # one build date across their shapes
    assert posts["verdict"] == "trusted" and lists["verdict"] != "trusted"
    assert lists["requested"] > 0  # the sample reached the group without dates

    later = _groups(second)
    assert next(s for p, s in later.items() if p.startswith("/YYYY"))["verdict"] == "trusted"
    assert next(s for p, s in later.items() if "/tags/*" in p)["verdict"] == "untrusted"
    why = [r for r in second["reasons"] if r["code"] == "groups-differ"]
    assert why and "/tags/*" in why[0]["detail"] and "trusted for /YYYY" in why[0]["detail"]
    assert sum(s["urls"] for s in second["segments"]) == POSTS + lists["group"]["urls"]


def _lines(command: list[str]) -> list[dict]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(command) == 0
    return [json.loads(line) for line in printed.getvalue().splitlines() if line.strip()]


def test_changed_and_plan_follow_each_group(tmp_path, db_url):
    for build in (0, 1):
        build_site(tmp_path / f"v{build + 1}", build)
    with LoopbackServer(root=tmp_path / "v1") as server:
        _audit(server.origin, db_url)
        since = "2026-09-01T00:00:00Z"
        changed = _lines(["changed", server.origin, "--since", since, "--db", db_url,
                          "--format", "jsonl"])  # fmt: skip
        planned = _lines(["plan", server.origin, "--db", db_url, "--budget", "1000",
                          "--format", "jsonl"])  # fmt: skip
        with History.open(db_url) as history:
            columns, rows = history._db.described("SELECT * FROM latest_segment_verdicts")
    by_reason: dict[str, set[str]] = {}
    for item in changed:
        by_reason.setdefault(item["why"], set()).add(item["loc"].split("/")[3])
    # posts are trusted: none was modified since September; every list page is not
    assert "2026" not in by_reason.get("not-trusted", set())
    assert by_reason["not-trusted"] == {"index.html", "page", "tags", "categories"}
    assert all(item["sitemap"].endswith("/sitemap.xml") for item in changed + planned)
    assert {item["reason"] for item in planned} == {"never-fetched"}  # nothing crawled yet
    views = [dict(zip(columns, row, strict=True)) for row in rows]
    assert sorted(str(v["group_pattern"])[:5] for v in views) == ["/ + /", "/YYYY"]


def test_a_plan_trusts_the_posts_lastmod_and_not_the_lists(tmp_path, db_url):
    for build in (0, 1):
        build_site(tmp_path / f"v{build + 1}", build)
    with LoopbackServer(root=tmp_path / "v1") as server:
        _audit(server.origin, db_url)
        with History.open(db_url) as history:
            entries = history.latest_entries(server.origin)
            paths = [loc.removeprefix(server.origin) for loc in entries["loc"]]
            record_fetches(history, crawl(server.origin, paths, datetime.now(UTC)))
        server.root = tmp_path / "v2"  # a deploy: edited posts, every list re-stamped
        planned = _lines(["plan", server.origin, "--db", db_url, "--format", "jsonl"])
    advanced = {item["url"].removeprefix(server.origin) for item in planned
                if item["reason"] == "lastmod-advanced"}  # fmt: skip
    edited = {f"/2026/0{1 + i % 5}/{1 + i % 27:02d}/post-{i}.html" for i in EDITED}
    assert advanced == edited  # the lists' moved build date is not read as a change


def build_hugo(root: Path, new_posts: int, edited: range = range(0)) -> None:
    """A Hugo-like blog: posts dated by their own updates, tag pages whose lastmod is their
    newest post's date and whose listing gains the posts added (``new_posts``); posts
    ``edited`` get a new paragraph and a November date (their tag pages, a list of titles,
    only that date)."""
    posts = {i: f"2026-0{1 + i % 8}-{1 + i % 27:02d}T10:00:00Z" for i in range(POSTS)}
    posts |= {i: f"2026-11-{1 + i % 9:02d}T10:00:00Z" for i in edited}
    posts |= {POSTS + k: f"2026-11-{10 + k:02d}T10:00:00Z" for k in range(new_posts)}
    tags: dict[int, list[int]] = {j: [] for j in range(TAGS)}
    for i in posts:
        tags[i % TAGS if i < POSTS else i - POSTS].append(i)
    urls = []
    for i, date in posts.items():
        edit = " Then it was updated with a paragraph of news." if i in edited else ""
        page = _page(f"Post {i}", f"Post {i} tells its own story at some length.{edit}", date)
        _write(root, f"/posts/p-{i}.html", page)
        urls.append((f"/posts/p-{i}.html", date))
    for j, members in tags.items():
        links = "".join(f"<li><a href='/posts/p-{i}.html'>Post {i}</a></li>" for i in members)
        _write(root, f"/tags/t-{j}.html", _page(f"Tag {j}", f"</p><ul>{links}</ul><p>"))
        urls.append((f"/tags/t-{j}.html", max(posts[i] for i in members)))
    body = "".join(
        f"<url><loc>{{{{origin}}}}{path}</loc><lastmod>{date}</lastmod></url>"
        for path, date in urls
    )
    _write(
        root,
        "/sitemap.xml",
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>',
    )


def test_lists_dated_by_their_newest_post_are_not_condemned_for_it(tmp_path, db_url):
    build_hugo(tmp_path / "v1", 0)
    build_hugo(tmp_path / "v2", 3)  # three posts, each added to one tag page
    with LoopbackServer(root=tmp_path / "v1") as server:
        _audit(server.origin, db_url)
        server.root = tmp_path / "v2"
        second = _audit(server.origin, db_url)
    assert second["verdict"] != "untrusted"
    assert all(s["verdict"] != "untrusted" for s in second["segments"])
    (lists,) = [s for s in second["segments"] if s.get("group", {}).get("pattern") == "/tags/*"]
    assert lists["changed"] == lists["lastmod_advanced"] > 0  # their listing changed with it
    codes = {r["code"] for r in second["reasons"]}
    assert not codes & {"lastmod-without-change", "changed-without-lastmod", "generation-time"}


def test_lists_whose_date_moved_while_they_stayed_the_same_are_judged_like_any_page(
    tmp_path, db_url
):
    """Tag pages whose lastmod moved to their newest post's date while they stayed byte for
    byte the same: for a crawler scheduling on lastmod, each such move is a wasted fetch, so
    it counts against lastmod's precision (``lastmod-without-change``), as on any page. The
    posts stay trusted: the site is ``partial``, and the report says why the lists moved."""
    from auditor.report.data import load_report_data, page_change

    build_hugo(tmp_path / "v1", 0)
    build_hugo(tmp_path / "v2", 0, edited=range(TAGS))  # every tag's newest post edited
    with LoopbackServer(root=tmp_path / "v1") as server:
        _audit(server.origin, db_url)
        server.root = tmp_path / "v2"
        second = _audit(server.origin, db_url)
        with History.open(db_url) as history:
            data = load_report_data(history, server.origin)
    groups = _groups(second)
    lists, posts = groups["/tags/*"], groups["/posts/*"]
    assert lists["verdict"] == "untrusted" and posts["verdict"] == "trusted"
    assert second["verdict"] == "partial"
    assert lists["lastmod_advanced"] >= 3 and lists["changed"] == 0  # moved, unchanged
    codes = {r["code"] for r in second["reasons"] if r.get("segment") == lists["sitemap"]}
    assert "lastmod-without-change" in codes
    said = {page_change(p) for p in data.pages if "/tags/" in p.loc and p.lastmod_precision}
    assert any("dated by its newest child" in s for s in said)


def test_the_report_shows_which_pages_decided(tmp_path, db_url):
    from auditor.report.data import load_report_data, page_evidence

    for build in (0, 1):
        build_site(tmp_path / f"v{build + 1}", build)
    with LoopbackServer(root=tmp_path / "v1") as server:
        _audit(server.origin, db_url)
        server.root = tmp_path / "v2"
        _audit(server.origin, db_url)
        with History.open(db_url) as history:
            data = load_report_data(history, server.origin)
    evidence = page_evidence(data.pages, data.previous_pages)
    posts = {v for loc, v in evidence.items() if "/post-" in loc}
    # The list group is the home page, its pagination, the tags and the categories: the
    # few pages its condemned lastmods get may be any of them (the seed, from the
    # server's random port, chose pagination pages alone about once in 100).
    lists = {v for loc, v in evidence.items() if "/post-" not in loc}
    assert posts == {"for"}  # their dates agree, their changes follow lastmod
    assert "against" in lists  # a moved build date on an unchanged listing


def test_a_group_left_inconclusive_gets_its_panel_first_on_the_next_run(tmp_path, db_url):
    from auditor.scorer.doubt import THIN_WANTED

    build_hugo(tmp_path / "v1", 0)
    build_hugo(tmp_path / "v2", 3)
    with LoopbackServer(root=tmp_path / "v1") as server:
        first = _groups(audit_json(server.origin, db_url, 20))["/tags/*"]
        server.root = tmp_path / "v2"
        second = _groups(audit_json(server.origin, db_url, 20))["/tags/*"]
    assert first["verdict"] == "inconclusive" and first["requested"] < THIN_WANTED  # by size
    assert second["requested"] >= THIN_WANTED  # the budget went where a figure was missing
