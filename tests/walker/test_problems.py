"""Walker problem codes: each raised where it belongs, with the detail it owes, and no other.

Hostile inputs (DTDs, entities, bombs) and HTTP-layer failures (timeouts, redirects, caps)
are tested elsewhere.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime

import pytest

from auditor.cli import main
from auditor.models import PROBLEM_CODES
from auditor.walker import WalkOptions, walk
from tests.loopback import FIXTURES, LoopbackServer, send

FORMATS = FIXTURES / "formats"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def run(target: str, options: WalkOptions | None = None):
    w = walk(target, options)
    entries = list(w)
    return w, entries


def run_logged(server: LoopbackServer, target: str, options: WalkOptions | None = None):
    """Walk and return the paths the server was asked for during this walk."""
    before = len(server.log)
    w, entries = run(target, options)
    return w, entries, server.paths()[before:]


def names_count(detail: str, count: int) -> bool:
    """True when the detail states ``count`` as a number (1234 or 1,234)."""
    pattern = rf"(?<![\d,.]){count:,}(?![\d,])|(?<![\d,.]){count}(?![\d,])"
    return re.search(pattern, detail) is not None


def codes(w) -> list[str]:
    return [p.code for p in w.problems]


def test_codes_used_here_are_contract_codes():
    used = {
        "http-error",
        "not-a-sitemap",
        "relative-url",
        "cross-host",
        "nested-index",
        "index-loop",
        "duplicate-url",
        "invalid-lastmod",
        "too-many-urls",
        "max-files",
        "wrong-namespace",
    }
    assert used <= PROBLEM_CODES


# -- http-error and not-a-sitemap beside good children -------------------------------------------


def test_http_error_child_names_its_status_and_other_children_are_read(site):
    server = site("fmt-errors")
    w, entries = run(server.url("/sitemap.xml"))
    assert [e.loc for e in entries] == [server.url("/a1"), server.url("/a2"), server.url("/b1")]
    errors = [p for p in w.problems if p.code == "http-error"]
    assert len(errors) == 1
    assert errors[0].sitemap == server.url("/missing.xml")
    assert "404" in errors[0].detail
    missing = next(f for f in w.files if f.url == server.url("/missing.xml"))
    assert (missing.kind, missing.status, missing.readable) == ("unreadable", 404, False)
    assert w.readable


def test_not_a_sitemap_children_in_an_index(site):
    server = site("fmt-errors")
    w, _entries = run(server.url("/sitemap.xml"))
    assert [(p.sitemap.rsplit("/", 1)[1], p.code) for p in w.problems] == [
        ("missing.xml", "http-error"),
        ("login.xml", "not-a-sitemap"),
        ("data.json", "not-a-sitemap"),
        ("empty.xml", "not-a-sitemap"),
    ]
    login = next(p for p in w.problems if p.sitemap.endswith("/login.xml"))
    assert "html" in login.detail.lower()
    kinds = {f.url.rsplit("/", 1)[1]: (f.kind, f.readable) for f in w.files}
    assert kinds == {
        "sitemap.xml": ("sitemapindex", True),
        "good-a.xml": ("urlset", True),
        "missing.xml": ("unreadable", False),
        "login.xml": ("unreadable", False),
        "data.json": ("unreadable", False),
        "empty.xml": ("unreadable", False),
        "good-b.xml": ("urlset", True),
    }


NOT_SITEMAPS = [
    ("login.html", "html"),  # <!DOCTYPE html>
    ("login-html5.html", "html"),  # <!doctype html>, as HTML5 pages write it
    ("not-a-sitemap.json", None),
    ("notes.txt", None),  # text whose first line is not a URL
    ("empty.xml", None),  # an empty 200 response
]


@pytest.mark.parametrize("where", ["local", "http"])
@pytest.mark.parametrize(("name", "root"), NOT_SITEMAPS, ids=[n for n, _ in NOT_SITEMAPS])
def test_not_a_sitemap(site, where, name, root):
    target = str(FORMATS / name) if where == "local" else site("fmt-formats").url("/" + name)
    w, entries = run(target)
    assert entries == []
    assert codes(w) == ["not-a-sitemap"]
    assert w.problems[0].sitemap == target
    if root is not None:
        assert root in w.problems[0].detail.lower()  # the detail names the root tag found
    assert [(f.kind, f.readable) for f in w.files] == [("unreadable", False)]
    assert not w.readable


def test_not_a_sitemap_names_an_unknown_root_tag(tmp_path):
    path = tmp_path / "feed.xml"
    path.write_text('<?xml version="1.0"?>\n<catalog><loc>https://example.com/</loc></catalog>\n')
    w, entries = run(str(path))
    assert entries == []
    assert codes(w) == ["not-a-sitemap"]
    assert "catalog" in w.problems[0].detail


# -- relative-url --------------------------------------------------------------------------------


def test_relative_urls_in_index_and_urlset_are_reported_once_per_file_and_not_used(site):
    server = site("fmt-relative")
    w, entries, paths = run_logged(server, server.url("/sitemap.xml"))
    assert [e.loc for e in entries] == [server.url("/ok"), server.url("/ok2")]
    assert [(p.sitemap, p.code) for p in w.problems] == [
        (server.url("/sitemap.xml"), "relative-url"),
        (server.url("/pages.xml"), "relative-url"),
    ]
    assert names_count(w.problems[0].detail, 2)  # /rel-child.xml and rel-child2.xml
    assert names_count(w.problems[1].detail, 3)  # /rel-a, rel-b, //127.0.0.1/protocol-relative
    assert paths == ["/sitemap.xml", "/pages.xml"]  # relative children are not read
    pages = next(f for f in w.files if f.url == server.url("/pages.xml"))
    assert (pages.records, pages.urls) == (5, 2)


def test_relative_urls_in_a_local_file(tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_text(
        f'<urlset xmlns="{NS}"><url><loc>/a</loc></url><url><loc>b.html</loc></url>'
        "<url><loc>https://example.com/c</loc></url></urlset>"
    )
    w, entries = run(str(path))
    assert [e.loc for e in entries] == ["https://example.com/c"]
    assert codes(w) == ["relative-url"]
    assert names_count(w.problems[0].detail, 2)


# -- cross-host ----------------------------------------------------------------------------------


def test_page_locs_on_another_host_port_or_scheme_are_not_emitted(site):
    server = site("fmt-cross-host")
    w, entries = run(server.url("/sitemap.xml"))
    assert [e.loc for e in entries] == [server.url("/ok"), server.url("/ok2")]
    assert codes(w) == ["cross-host"]
    assert w.problems[0].sitemap == server.url("/sitemap.xml")
    assert names_count(w.problems[0].detail, 3)


@pytest.mark.parametrize("kind", ["xml", "text"])
def test_same_port_but_another_host_name_or_scheme_is_cross_host(serve, kind):
    def sitemap(handler):
        port = handler.server.server_port
        locs = [
            f"http://127.0.0.1:{port}/ok",
            f"http://localhost:{port}/other-name",
            f"https://127.0.0.1:{port}/other-scheme",
            f"http://127.0.0.2:{port}/other-address",
            f"http://127.0.0.1:{port}/ok2",
        ]
        if kind == "text":
            send(handler, 200, "\n".join(locs).encode(), "text/plain")
            return
        body = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
        send(handler, 200, f'<urlset xmlns="{NS}">{body}</urlset>'.encode())

    server = serve(routes={"/sitemap": sitemap})
    w, entries = run(server.url("/sitemap"))
    assert [e.loc for e in entries] == [server.url("/ok"), server.url("/ok2")]
    assert codes(w) == ["cross-host"]
    assert names_count(w.problems[0].detail, 3)


def test_index_child_on_another_host_is_not_read(serve):
    other = serve("sites/fmt-cross-host")  # would answer /child.xml if asked

    def index(handler):
        body = (
            f'<sitemapindex xmlns="{NS}">'
            f"<sitemap><loc>{other.origin}/child.xml</loc><lastmod>2026-10-05</lastmod></sitemap>"
            f"<sitemap><loc>https://127.0.0.1:{handler.server.server_port}/own.xml</loc></sitemap>"
            f"<sitemap><loc>http://127.0.0.1:{handler.server.server_port}/own.xml</loc></sitemap>"
            "</sitemapindex>"
        )
        send(handler, 200, body.encode())

    def own(handler):
        port = handler.server.server_port
        body = f'<urlset xmlns="{NS}"><url><loc>http://127.0.0.1:{port}/p</loc></url></urlset>'
        send(handler, 200, body.encode())

    server = serve(routes={"/index.xml": index, "/own.xml": own})
    w, entries = run(server.url("/index.xml"))
    assert [e.loc for e in entries] == [server.url("/p")]
    index = server.url("/index.xml")
    assert [(p.sitemap, p.code) for p in w.problems] == [
        (index, "cross-host"),
        (index, "path-mismatch"),  # the https twin of the index's own host: after a move?
    ]
    assert names_count(w.problems[0].detail, 2)  # another port; another scheme
    assert w.problems[1].detail.startswith("Path mismatch: https instead of http: 1 sitemap(s)")
    assert other.log == []  # never requested
    assert server.paths() == ["/index.xml", "/own.xml"]


def test_sitemap_declared_in_robots_txt_on_another_server_counts_for_the_site(serve):
    """The protocol's cross-submission: robots.txt of A names a sitemap hosted on B."""
    holder: dict[str, LoopbackServer] = {}

    def robots(handler):
        b = holder["b"].origin
        send(handler, 200, f"User-agent: *\nSitemap: {b}/index.xml\n".encode(), "text/plain")

    def index(handler):
        a, b = holder["a"].origin, holder["b"].origin
        body = (
            f'<sitemapindex xmlns="{NS}">'
            f"<sitemap><loc>{b}/pages.xml</loc><lastmod>2026-10-05</lastmod></sitemap>"
            f"<sitemap><loc>{a}/a-pages.xml</loc><lastmod>2026-10-01</lastmod></sitemap>"
            "</sitemapindex>"
        )
        send(handler, 200, body.encode())

    def b_pages(handler):
        a, b = holder["a"].origin, holder["b"].origin
        locs = [f"{a}/from-b", f"{b}/on-b", "http://127.0.0.1:1/elsewhere"]
        body = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
        send(handler, 200, f'<urlset xmlns="{NS}">{body}</urlset>'.encode())

    def a_pages(handler):
        a = holder["a"].origin
        body = f'<urlset xmlns="{NS}"><url><loc>{a}/on-a</loc></url></urlset>'
        send(handler, 200, body.encode())

    holder["b"] = serve(routes={"/index.xml": index, "/pages.xml": b_pages})
    holder["a"] = serve(routes={"/robots.txt": robots, "/a-pages.xml": a_pages})
    a, b = holder["a"], holder["b"]
    w, entries = run(a.origin)
    assert [e.loc for e in entries] == [a.url("/from-b"), b.url("/on-b"), a.url("/on-a")]
    assert [(p.sitemap, p.code) for p in w.problems] == [(b.url("/pages.xml"), "cross-host")]
    assert names_count(w.problems[0].detail, 1)
    assert a.paths() == ["/robots.txt", "/a-pages.xml"]
    assert b.paths() == ["/index.xml", "/pages.xml"]
    assert all(f.via_robots for f in w.files)


# -- nested-index and index-loop -----------------------------------------------------------------


def test_nested_index_is_followed_and_reported(site):
    server = site("fmt-nested")
    w, entries = run(server.url("/sitemap.xml"))
    assert [e.loc for e in entries] == [server.url("/deep-page"), server.url("/top-page")]
    assert [(p.sitemap, p.code) for p in w.problems] == [
        (server.url("/sub-index.xml"), "nested-index")
    ]
    assert server.url("/sitemap.xml") in w.problems[0].detail  # names the index that listed it
    parents = {f.url.rsplit("/", 1)[1]: (f.kind, f.parent) for f in w.files}
    assert parents == {
        "sitemap.xml": ("sitemapindex", None),
        "sub-index.xml": ("sitemapindex", server.url("/sitemap.xml")),
        "deep.xml": ("urlset", server.url("/sub-index.xml")),
        "top.xml": ("urlset", server.url("/sitemap.xml")),
    }


def test_index_loop_a_lists_b_lists_a(site):
    server = site("fmt-loop")
    w, entries, paths = run_logged(server, server.url("/a.xml"))
    assert [e.loc for e in entries] == [server.url("/b-page"), server.url("/a-page")]
    assert Counter((p.sitemap, p.code) for p in w.problems) == Counter(
        {(server.url("/b.xml"), "nested-index"): 1, (server.url("/b.xml"), "index-loop"): 1}
    )
    loop = next(p for p in w.problems if p.code == "index-loop")
    assert server.url("/a.xml") in loop.detail
    assert paths.count("/a.xml") == 1 and paths.count("/b.xml") == 1
    assert sorted(paths) == ["/a-pages.xml", "/a.xml", "/b-pages.xml", "/b.xml"]


def test_index_listing_itself(site):
    server = site("fmt-loop")
    w, entries, paths = run_logged(server, server.url("/self.xml"))
    assert [e.loc for e in entries] == [server.url("/self-page")]
    assert [(p.sitemap, p.code) for p in w.problems] == [(server.url("/self.xml"), "index-loop")]
    assert server.url("/self.xml") in w.problems[0].detail
    assert paths == ["/self.xml", "/self-pages.xml"]


def test_index_without_namespace_is_followed_and_reported(site):
    server = site("fmt-index-nons")
    w, entries = run(server.url("/sitemap.xml"))
    assert [e.loc for e in entries] == [server.url("/page")]
    assert [(p.sitemap, p.code) for p in w.problems] == [
        (server.url("/sitemap.xml"), "wrong-namespace")
    ]
    assert "sitemapindex" in w.problems[0].detail


# -- duplicate-url -------------------------------------------------------------------------------


def test_duplicates_within_and_across_files(site):
    server = site("fmt-dupes")
    w, entries = run(server.url("/sitemap.xml"))
    got = [(e.loc.rsplit("/", 1)[1], e.lastmod, e.sitemap.rsplit("/", 1)[1]) for e in entries]
    assert got == [  # first occurrence kept, with its own lastmod
        ("a", utc(2026, 1, 1), "one.xml"),
        ("b", utc(2026, 1, 2), "one.xml"),
        ("c", utc(2026, 1, 3), "one.xml"),
        ("d", utc(2026, 1, 4), "two.xml"),
    ]
    assert [(p.sitemap, p.code) for p in w.problems] == [
        (server.url("/one.xml"), "duplicate-url"),  # a and b again, within the file
        (server.url("/two.xml"), "duplicate-url"),  # c and a, listed by one.xml already
    ]
    assert names_count(w.problems[0].detail, 2)
    assert names_count(w.problems[1].detail, 2)
    assert w.urls == 4
    counts = {f.url.rsplit("/", 1)[1]: (f.records, f.urls) for f in w.files}
    assert counts == {"sitemap.xml": (2, 0), "one.xml": (5, 3), "two.xml": (3, 1)}


# -- invalid-lastmod -----------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["local", "http"])
def test_invalid_lastmod_keeps_the_entry_and_spoils_nothing_else(site, where):
    if where == "local":
        target, origin = str(FORMATS / "lastmods.xml"), "https://example.com"
    else:
        server = site("fmt-formats")
        target, origin = server.url("/lastmods.xml"), server.origin
    w, entries = run(target)
    got = {
        e.loc[len(origin) + 1 :]: (e.lastmod, e.lastmod_precision, e.lastmod_raw) for e in entries
    }
    assert got == {
        "year": (utc(2026, 1, 1), "year", "2026"),
        "month": (utc(2026, 10, 1), "month", "2026-10"),
        "day": (utc(2026, 10, 5), "day", "2026-10-05"),
        "slash": (None, None, "15/10/2026"),
        "minute": (utc(2026, 10, 5, 8, 30), "minute", "2026-10-05T10:30+02:00"),
        "second": (utc(2026, 10, 5, 10, 30, 15), "second", "2026-10-05T10:30:15Z"),
        "yesterday": (None, None, "yesterday"),
        "fraction": (
            utc(2026, 10, 5, 15, 30, 15, 250_000),
            "fraction",
            "2026-10-05T10:30:15.25-05:00",
        ),
        "feb30": (None, None, "2026-02-30"),
        "no-zone": (None, None, "2026-10-05T10:30:15"),
        "after": (utc(2026, 10, 6), "day", "2026-10-06"),
    }
    assert [e.loc[len(origin) + 1 :] for e in entries][:4] == ["year", "month", "day", "slash"]
    assert [(p.sitemap, p.code) for p in w.problems] == [(target, "invalid-lastmod")]
    assert names_count(w.problems[0].detail, 4)


def test_invalid_rss_pubdate_keeps_the_entry(tmp_path):
    path = tmp_path / "feed.rss"
    path.write_text(
        '<rss version="2.0"><channel><link>https://example.com/</link>'
        "<item><link>https://example.com/a</link><pubDate>someday</pubDate></item>"
        "<item><link>https://example.com/b</link>"
        "<pubDate>Mon, 05 Oct 2026 10:30:00 GMT</pubDate></item>"
        "</channel></rss>"
    )
    w, entries = run(str(path))
    got = [(e.loc, e.lastmod, e.lastmod_raw) for e in entries]
    assert got == [
        ("https://example.com/a", None, "someday"),
        ("https://example.com/b", utc(2026, 10, 5, 10, 30), "Mon, 05 Oct 2026 10:30:00 GMT"),
    ]
    assert codes(w) == ["invalid-lastmod"]
    assert names_count(w.problems[0].detail, 1)


def test_invalid_lastmod_in_an_index_is_reported_and_the_child_read_last(site):
    server = site("fmt-invalid-lastmod")
    w, entries, paths = run_logged(server, server.url("/sitemap.xml"))
    assert [e.loc for e in entries] == [
        server.url("/newest-page"),
        server.url("/first-page"),
        server.url("/bad-page"),
    ]
    assert [(p.sitemap, p.code) for p in w.problems] == [
        (server.url("/sitemap.xml"), "invalid-lastmod")
    ]
    assert names_count(w.problems[0].detail, 1)
    assert paths == ["/sitemap.xml", "/newest.xml", "/first.xml", "/bad.xml"]
    bad = next(f for f in w.files if f.url == server.url("/bad.xml"))
    assert bad.index_lastmod is None


# -- too-many-urls -------------------------------------------------------------------------------


def _big_urlset(path, count: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n')
        out.writelines(
            f"<url><loc>https://example.com/p/{i}</loc><lastmod>2026-10-05</lastmod></url>\n"
            for i in range(count)
        )
        out.write("</urlset>\n")


def test_over_50000_urls_all_read_and_reported(tmp_path):
    path = tmp_path / "big.xml"
    _big_urlset(path, 50_001)
    w, entries = run(str(path))
    assert len(entries) == 50_001
    assert entries[-1].loc == "https://example.com/p/50000"
    assert len({e.loc for e in entries}) == 50_001
    assert codes(w) == ["too-many-urls"]
    assert w.problems[0].sitemap == str(path)
    assert names_count(w.problems[0].detail, 50_001)


def test_exactly_50000_urls_is_within_the_limit(tmp_path):
    path = tmp_path / "full.xml"
    _big_urlset(path, 50_000)
    w, entries = run(str(path))
    assert len(entries) == 50_000
    assert w.problems == []


def test_over_50000_lines_in_a_text_sitemap(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("".join(f"https://example.com/t/{i}\n" for i in range(50_001)))
    w, entries = run(str(path))
    assert len(entries) == 50_001
    assert codes(w) == ["too-many-urls"]
    assert names_count(w.problems[0].detail, 50_001)


# -- max-files -----------------------------------------------------------------------------------


def test_max_files_stops_the_walk_and_says_so(site):
    server = site("fmt-max-files")
    w, entries, paths = run_logged(server, server.url("/sitemap.xml"), WalkOptions(max_files=2))
    assert [e.loc for e in entries] == [server.url("/m1-page")]
    assert codes(w) == ["max-files"]
    assert names_count(w.problems[0].detail, 2)
    assert paths == ["/sitemap.xml", "/m1.xml"]
    assert len(w.files) == 2


def test_max_files_not_reached_raises_nothing(site):
    server = site("fmt-max-files")
    w, entries = run(server.url("/sitemap.xml"), WalkOptions(max_files=4))
    assert len(entries) == 3
    assert w.problems == []


# -- a file reached twice ------------------------------------------------------------------------


def test_file_listed_by_robots_txt_and_by_an_index_is_read_once(site):
    server = site("fmt-twice")
    w, entries, paths = run_logged(server, server.origin)
    assert paths.count("/pages.xml") == 1
    assert sorted(paths) == ["/pages.xml", "/posts.xml", "/robots.txt", "/sitemap_index.xml"]
    assert sorted(e.loc for e in entries) == [
        server.url("/page-1"),
        server.url("/page-2"),
        server.url("/post-1"),
    ]
    assert w.problems == []  # in particular no duplicate-url for pages.xml's URLs
    assert [f.url for f in w.files].count(server.url("/pages.xml")) == 1


# -- the --problems file -------------------------------------------------------------------------


def test_cli_problems_file(site, tmp_path, capsys):
    server = site("fmt-errors")
    out = tmp_path / "problems.jsonl"
    code = main(["walk", server.url("/sitemap.xml"), "--problems", str(out)])
    assert code == 0  # some sitemaps were readable
    stdout = capsys.readouterr().out
    assert len(stdout.splitlines()) == 3
    lines = out.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert all(list(r) == ["sitemap", "code", "detail"] for r in records)
    assert [(r["sitemap"], r["code"]) for r in records] == [
        (server.url("/missing.xml"), "http-error"),
        (server.url("/login.xml"), "not-a-sitemap"),
        (server.url("/data.json"), "not-a-sitemap"),
        (server.url("/empty.xml"), "not-a-sitemap"),
    ]
    assert "404" in records[0]["detail"]


def test_cli_problems_file_when_nothing_is_readable(site, tmp_path, capsys):
    server = site("fmt-errors")
    out = tmp_path / "problems.jsonl"
    code = main(["walk", server.url("/missing.xml"), "--problems", str(out)])
    assert code == 1
    assert capsys.readouterr().out == ""
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["sitemap"], r["code"]) for r in records] == [
        (server.url("/missing.xml"), "http-error")
    ]
    assert "404" in records[0]["detail"]


def test_cli_problems_file_is_empty_without_problems(site, tmp_path, capsys):
    server = site("fmt-nested")
    out = tmp_path / "problems.jsonl"
    assert main(["walk", server.url("/top.xml"), "--problems", str(out)]) == 0
    capsys.readouterr()
    assert out.read_text(encoding="utf-8") == ""


def test_cli_max_files_option(site, tmp_path, capsys):
    server = site("fmt-max-files")
    out = tmp_path / "problems.jsonl"
    code = main(["walk", server.url("/sitemap.xml"), "--max-files", "2", "--problems", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["loc"] for r in rows] == [server.url("/m1-page")]
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["code"] for r in records] == ["max-files"]
