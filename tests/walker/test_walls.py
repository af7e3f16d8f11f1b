"""A sitemap or robots.txt behind a bot wall is named ``blocked``, at 200, 403 and 503,
and never read; an HTML page served instead of a sitemap says which page it is."""

from __future__ import annotations

import pytest

from auditor.walker import walk
from tests.loopback import FIXTURES, LoopbackServer, send

WALLS = FIXTURES / "walls"
URLSET = (
    b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<url><loc>{{origin}}/a</loc></url></urlset>"
)


def _serve(body: bytes, status: int, kind: str = "text/html", headers=None):
    def route(handler):
        send(handler, status, body, kind, headers or {})

    return route


def _index(server: LoopbackServer) -> bytes:
    return (
        b'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + f"<sitemap><loc>{server.origin}/walled.xml</loc></sitemap>".encode()
        + f"<sitemap><loc>{server.origin}/open.xml</loc></sitemap>".encode()
        + b"</sitemapindex>"
    )


@pytest.mark.parametrize("status", [200, 403, 503])
@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("cloudflare-challenge.html", "Cloudflare challenge page"),
        ("datadome-captcha.html", "DataDome captcha page"),
        ("perimeterx-captcha.html", "PerimeterX/HUMAN captcha page"),
        ("akamai-denied.html", "Akamai block page"),
    ],
)
def test_a_walled_sub_sitemap_is_blocked_and_the_others_are_read(name, named, status):
    wall = (WALLS / name).read_bytes()
    routes = {"/walled.xml": _serve(wall, status)}
    with LoopbackServer(routes=routes) as server:
        routes["/sitemap.xml"] = _serve(_index(server), 200, "application/xml")
        routes["/open.xml"] = _serve(URLSET.replace(b"{{origin}}", server.origin.encode()), 200)
        w = walk(server.url("/sitemap.xml"))
        entries = list(w)
    assert [e.loc for e in entries] == [server.origin + "/a"]
    (problem,) = [p for p in w.problems if p.sitemap.endswith("/walled.xml")]
    assert (problem.code, problem.detail) == ("blocked", f"{named} (HTTP {status})")
    walled = next(f for f in w.files if f.url.endswith("/walled.xml"))
    assert not walled.urls


def test_a_walled_robots_txt_is_blocked_and_lists_no_sitemap():
    wall = (WALLS / "cloudflare-challenge.html").read_bytes()
    headers = {"cf-mitigated": "challenge", "Server": "cloudflare"}
    routes = {"/robots.txt": _serve(wall, 403, headers=headers)}
    with LoopbackServer(routes=routes) as server:
        w = walk(server.origin)
        list(w)
    robots = [p for p in w.problems if p.sitemap.endswith("/robots.txt")]
    assert [(p.code, p.detail) for p in robots] == [
        ("blocked", "robots.txt: Cloudflare challenge page (HTTP 403)")
    ]


@pytest.mark.parametrize(
    ("name", "detail"),
    [
        ("login.html", "root element html (an HTML login page)"),
        ("consent.html", "root element html (an HTML consent page)"),
        ("error.html", "root element html (an HTML error page)"),
        ("protected-page.html", "root element html (an HTML page)"),
    ],
)
def test_an_html_page_where_a_sitemap_should_be_says_which(name, detail):
    routes = {"/sitemap.xml": _serve((WALLS / name).read_bytes(), 200)}
    with LoopbackServer(routes=routes) as server:
        w = walk(server.url("/sitemap.xml"))
        list(w)
    assert [(p.code, p.detail) for p in w.problems] == [("not-a-sitemap", detail)]
