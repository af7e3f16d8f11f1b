"""Where a walk starts: robots.txt Sitemap lines, the /sitemap.xml fallback, targets, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.errors import UsageError
from auditor.walker import Target, classify_target, sitemaps_from_robots, walk
from auditor.walker.walk import Walk
from tests.loopback import FIXTURES, LoopbackServer

ROOT = Path(__file__).resolve().parents[2]


def run_logged(server: LoopbackServer, target: str):
    before = len(server.log)
    w = walk(target)
    entries = list(w)
    return w, entries, server.paths()[before:]


# -- robots.txt Sitemap lines --------------------------------------------------------------------


def test_sitemap_lines_any_case_spacing_comments_relative_and_repeated():
    text = (FIXTURES / "sites" / "fmt-robots" / "robots.txt").read_text(encoding="utf-8")
    site = "http://127.0.0.1:8001"
    text = text.replace("{{origin}}", site)
    assert sitemaps_from_robots(text, site) == [
        f"{site}/a.xml",  # "sitemap: /a.xml", listed twice, kept once
        f"{site}/b.xml",  # "SITEMAP:" with no space
        f"{site}/c.xml",  # odd spacing around the colon, relative value, trailing comment
        f"{site}/d.xml",  # mixed case, tab, comment after a tab
    ]  # "# Sitemap: /commented.xml" is a comment


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sitemap: https://example.com/s.xml\r\nSitemap: /t.xml\r\n", ["/s.xml", "/t.xml"]),
        ("\ufeffSitemap: /bom.xml\n", ["/bom.xml"]),
        ("User-agent: *\nDisallow: /\n", []),
        ("", []),
        ("Sitemap: /a.xml # old one: /b.xml\n", ["/a.xml"]),
        ("Sitemap:/nospace.xml", ["/nospace.xml"]),  # no final newline either
        ("  sitemap  :  sub/dir.xml  \n", ["/sub/dir.xml"]),
        ("Sitemap: ftp://example.com/s.xml\nSitemap: /ok.xml\n", ["/ok.xml"]),
        ("Disallow: /sitemap: /no.xml\n", []),  # not at the start of a line
        # an empty Sitemap: line has no value: it must not take the next line as one
        ("Sitemap:\nSitemap: /real.xml\n", ["/real.xml"]),
        ("Sitemap:\n/not-a-sitemap-line.xml\n", []),
        ("Sitemap: \r\nUser-agent: *\r\nSitemap: /real.xml\r\n", ["/real.xml"]),
    ],
)
def test_sitemap_line_forms(text, expected):
    site = "https://example.com"
    assert sitemaps_from_robots(text, site) == [site + p for p in expected]


def test_sitemap_on_another_host_in_robots_txt_is_kept():
    text = "Sitemap: https://cdn.example.net/sitemaps/index.xml\n"
    assert sitemaps_from_robots(text, "https://example.com") == [
        "https://cdn.example.net/sitemaps/index.xml"
    ]


def test_walk_reads_every_robots_txt_sitemap_in_order(site):
    server = site("fmt-robots")
    w, entries, paths = run_logged(server, server.origin)
    assert paths == ["/robots.txt", "/a.xml", "/b.xml", "/c.xml", "/d.xml"]  # no /sitemap.xml
    assert [e.loc for e in entries] == [server.url(f"/{n}-page") for n in "abcd"]
    assert w.problems == []
    assert all(f.via_robots and f.parent is None for f in w.files)


def test_no_sitemap_line_falls_back_to_sitemap_xml(site):
    server = site("fmt-robots-none")
    w, entries, paths = run_logged(server, server.origin)
    assert paths == ["/robots.txt", "/sitemap.xml"]
    assert [e.loc for e in entries] == [server.url("/fallback-page")]
    assert w.problems == []
    assert [(f.url, f.via_robots) for f in w.files] == [(server.url("/sitemap.xml"), False)]


def test_robots_txt_404_falls_back_to_sitemap_xml_without_a_problem(site):
    server = site("fmt-no-robots")
    w, entries, paths = run_logged(server, server.origin)
    assert paths == ["/robots.txt", "/sitemap.xml"]
    assert [e.loc for e in entries] == [server.url("/fallback-page")]
    assert w.problems == []
    assert w.readable


def test_site_origin_with_a_trailing_slash(site):
    server = site("fmt-no-robots")
    _w, entries, paths = run_logged(server, server.origin + "/")
    assert paths == ["/robots.txt", "/sitemap.xml"]
    assert [e.loc for e in entries] == [server.url("/fallback-page")]


def test_sitemap_url_target_is_read_directly(site):
    server = site("fmt-no-robots")
    w, entries, paths = run_logged(server, server.url("/other.xml"))
    assert paths == ["/other.xml"]  # robots.txt not requested
    assert [e.loc for e in entries] == [server.url("/other-page")]
    assert w.problems == []
    assert w.site == server.origin
    assert [(f.url, f.via_robots) for f in w.files] == [(server.url("/other.xml"), False)]


def test_local_file_target():
    path = FIXTURES / "formats" / "urlset.xml"
    w = walk(str(path))
    entries = list(w)
    assert [e.loc for e in entries] == [
        "https://example.com/",
        "https://example.com/a",
        "https://example.com/b",
    ]
    assert {e.sitemap for e in entries} == {str(path)}
    assert w.site is None
    assert [(f.url, f.kind, f.via_robots, f.status) for f in w.files] == [
        (str(path), "urlset", False, None)
    ]


def test_a_bare_file_name_in_the_current_directory_is_a_file(monkeypatch):
    monkeypatch.chdir(FIXTURES / "formats")
    assert classify_target("urlset.xml") == Target("file", "urlset.xml")
    w = walk("urlset.xml")
    assert len(list(w)) == 3
    assert w.problems == []


# -- classify_target -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("example.com", Target("site", "https://example.com", scheme_given=False)),
        ("Example.COM", Target("site", "https://example.com", scheme_given=False)),
        ("  example.com  ", Target("site", "https://example.com", scheme_given=False)),
        ("example.com/", Target("site", "https://example.com", scheme_given=False)),
        ("www.example.co.uk", Target("site", "https://www.example.co.uk", scheme_given=False)),
        ("example.com:8080", Target("site", "https://example.com:8080", scheme_given=False)),
        ("localhost:8000", Target("site", "https://localhost:8000", scheme_given=False)),
        ("http://127.0.0.1:8001", Target("site", "http://127.0.0.1:8001")),
        ("http://127.0.0.1:8001/", Target("site", "http://127.0.0.1:8001")),
        ("HTTPS://Example.com", Target("site", "https://example.com")),
        ("https://example.com:443", Target("site", "https://example.com")),  # default port dropped
        ("https://Example.COM.:443/", Target("site", "https://example.com")),
        ("http://[0:0::1]:80/", Target("site", "http://[::1]")),
        ("https://example.com/sitemap.xml", Target("url", "https://example.com/sitemap.xml")),
        ("https://example.com/?sitemap=1", Target("url", "https://example.com/?sitemap=1")),
        (
            "http://127.0.0.1:8001/sitemaps/index.xml.gz",
            Target("url", "http://127.0.0.1:8001/sitemaps/index.xml.gz"),
        ),
    ],
)
def test_classify_target(text, expected):
    assert classify_target(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "no/such/directory/",
        "no/such/dir/sitemap.xml",
        "./missing.xml",
        "../missing.xml",
        "ftp://example.com/sitemap.xml",
        "file:///etc/hosts",
        "example.com:8080/sitemap.xml",
        "https://",
        "https://example.com:99999",
        "https://example.com:port",
    ],
)
def test_classify_target_usage_errors(text):
    with pytest.raises(UsageError):
        classify_target(text)


@pytest.mark.parametrize(
    ("text", "scheme"),
    [
        ("mailto:someone@example.com", "mailto"),
        ("MAILTO:someone@example.com", "mailto"),
        ("javascript:alert(1)", "javascript"),
        ("javascript:void(0)", "javascript"),
        ("ftp:example.com", "ftp"),
        ("ftp://example.com/sitemap.xml", "ftp"),
        ("file:/etc/hosts", "file"),
        ("file:///etc/hosts", "file"),
        ("data:text/html,hello", "data"),
        ("tel:+441234567890", "tel"),
    ],
)
def test_a_url_of_another_scheme_is_a_usage_error_naming_it(text, scheme):
    """Not taken for a bare host name (``mailto:someone@example.com`` read as the host
    example.com with a user and a password), nor for a missing file: the scheme is named."""
    with pytest.raises(UsageError) as caught:
        classify_target(text)
    assert f"{scheme}:" in str(caught.value)
    assert "http(s)" in str(caught.value)


def test_a_directory_that_does_not_exist_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError):
        classify_target(str(tmp_path / "not" / "there"))
    with pytest.raises(UsageError):
        walk(str(tmp_path / "not" / "there"))


def test_an_existing_directory_is_not_a_sitemap_file(tmp_path):
    with pytest.raises(UsageError):
        classify_target(str(tmp_path))


def test_site_of_each_kind_of_target(tmp_path):
    path = tmp_path / "s.xml"
    path.write_text("https://example.com/\n")
    assert classify_target(str(path)).site is None
    assert classify_target("https://Example.com:8443/a/s.xml").site == "https://example.com:8443"
    assert classify_target("example.com").site == "https://example.com"


def test_two_ports_are_two_sites(serve):
    a = serve("sites/fmt-ports")
    b = serve("sites/fmt-ports")
    assert classify_target(a.origin).site != classify_target(b.origin).site
    assert classify_target("http://127.0.0.1:8001").site == "http://127.0.0.1:8001"
    assert classify_target("http://127.0.0.1:8002").site == "http://127.0.0.1:8002"

    wa = Walk(a.origin)
    entries_a = list(wa)
    assert wa.site == a.origin
    assert [e.loc for e in entries_a] == [a.url("/page"), a.url("/other")]
    assert wa.problems == []
    assert b.log == []  # walking A never touched B

    wb = Walk(b.origin)
    entries_b = list(wb)
    assert wb.site == b.origin
    assert [e.loc for e in entries_b] == [b.url("/page"), b.url("/other")]
    assert {e.loc for e in entries_a}.isdisjoint(e.loc for e in entries_b)


# -- exit codes ----------------------------------------------------------------------------------


def test_exit_0_when_something_was_read_even_with_problems(site, capsys):
    server = site("fmt-errors")
    assert main(["walk", server.url("/sitemap.xml")]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 3


@pytest.mark.parametrize("path", ["/missing.xml", "/empty.xml", "/login.xml", "/data.json"])
def test_exit_1_when_nothing_is_readable(site, capsys, path):
    server = site("fmt-errors")
    assert main(["walk", server.url(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err  # says why


def test_exit_1_for_a_site_with_neither_robots_nor_sitemap(serve, capsys):
    empty = serve()  # answers 404 to everything
    assert main(["walk", empty.origin]) == 1
    assert capsys.readouterr().out == ""
    assert empty.paths() == ["/robots.txt", "/sitemap.xml"]


@pytest.mark.parametrize(
    "target", ["no/such/directory/", "./missing.xml", "ftp://example.com/s.xml", "https://x:99999"]
)
def test_exit_2_for_a_target_that_cannot_be_used(capsys, target):
    assert main(["walk", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "auditor:" in captured.err


@pytest.mark.parametrize(
    "argv",
    [
        ["walk"],
        ["walk", "example.com", "--format", "xml"],
        ["walk", "example.com", "--max-files", "0"],
        ["walk", "example.com", "--timeout", "-1"],
        ["walk", "example.com", "--no-such-option"],
    ],
)
def test_exit_2_for_bad_arguments(capsys, argv):
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    assert capsys.readouterr().out == ""


def test_exit_codes_from_a_real_process(tmp_path):
    ok = subprocess.run(
        [sys.executable, "-m", "auditor", "walk", str(FIXTURES / "formats" / "urlset.xml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert [json.loads(line)["loc"] for line in ok.stdout.splitlines()] == [
        "https://example.com/",
        "https://example.com/a",
        "https://example.com/b",
    ]
    unreadable = subprocess.run(
        [sys.executable, "-m", "auditor", "walk", str(FIXTURES / "formats" / "empty.xml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert (unreadable.returncode, unreadable.stdout) == (1, "")
    usage = subprocess.run(
        [sys.executable, "-m", "auditor", "walk", str(tmp_path / "no" / "such" / "dir")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert (usage.returncode, usage.stdout) == (2, "")


def test_a_robots_txt_cut_off_by_the_deadline_is_a_timeout_and_its_lines_are_kept(serve):
    import time as clock

    from auditor.http import HttpOptions
    from auditor.walker import WalkOptions

    def drip(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()  # no length: the body ends when the connection does
        handler.wfile.write(b"Sitemap: /sitemap_index.xml\n")
        handler.wfile.flush()
        for _ in range(40):
            handler.wfile.write(b"# \n")
            handler.wfile.flush()
            clock.sleep(0.1)

    server = serve("sites/basic", routes={"/robots.txt": drip})
    options = WalkOptions(http=HttpOptions(timeout=1.0, retries=0))
    w = walk(server.origin, options)
    entries = list(w)

    assert [(p.code, p.sitemap) for p in w.problems] == [("timeout", server.url("/robots.txt"))]
    assert "robots.txt" in w.problems[0].detail
    assert entries and w.files[0].url == server.url("/sitemap_index.xml") and w.files[0].via_robots
