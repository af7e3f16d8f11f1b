"""Small real edits are changes, audited twice through ``auditor audit`` (issue 31).

The site is built as a documentation generator builds one: every page's lastmod is its
source's last commit (accurate), a breadcrumb in ``<main>``, a footer with the copyright
year. Between the two builds, as on a real documentation site replayed offline:

- the footer's year changed on every page (the site's template: never a change);
- the download page's file names moved from 5.1.0 to 5.3.0 in link-dense table cells;
- two stub pages' only edit is their breadcrumb label (their own frame: ambiguous);
- one page's only edit recapitalises its heading's words;
- two pages gained a paragraph;

each with its lastmod advanced. Before issue 31 the link cells and the recapitalised
heading read as no change, and with the footer year the breadcrumb pages counted against
lastmod: the group was condemned.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from auditor.cli import main
from tests.history.conftest import backend, db_url
from tests.loopback import LoopbackServer

__all__ = ["backend", "db_url"]

TOPICS = [f"topic-{n}" for n in range(24)]
STUBS = ("topic-3", "topic-4")  # breadcrumb label edited
RECAPITALISED = "topic-5"
GROWN = ("topic-6", "topic-7")
OLD, NEW = "2025-03-01T10:00:00Z", "2025-09-15T10:00:00Z"


def _lastmod(path: str, build: int) -> str:
    edited = {"download", *STUBS, RECAPITALISED, *GROWN}
    if build and path in edited:
        return NEW
    n = int(path.rsplit("-", 1)[1]) if path.startswith("topic-") else 24
    return f"2025-0{1 + n % 2}-{1 + n:02d}T10:00:00Z" if n < 28 else OLD


def _frame(crumb: str, body: str, year: int) -> str:
    return (
        "<html><head><title>Example docs</title></head><body>"
        "<header><a href='/'>Example</a></header><nav><a href='/'>Home</a>"
        "<a href='/download/'>Download</a></nav><main>"
        f"<nav class='breadcrumb' aria-label='breadcrumb'><a href='/'>Docs</a> / {crumb}</nav>"
        f"{body}</main><footer>© 2014 - {year} Example Project contributors.</footer>"
        "</body></html>"
    )


def _topic(path: str, build: int) -> str:
    n = path.rsplit("-", 1)[1]
    crumb = f"Topic {n}"
    if build and path in STUBS:
        crumb = f"Topic {n} (guide)"
    heading = f"how to use part {n} of the server"
    if build and path == RECAPITALISED:
        heading = heading.title()
    text = (
        f"<h1>{heading}</h1><p>Part {n} of the server reads its settings at start-up and"
        " keeps them until it stops; this page lists each setting and its default.</p>"
    )
    if build and path in GROWN:
        text += f"<p>Since version 5.3 part {n} also reloads its settings on a signal.</p>"
    return _frame(crumb, text, 2025 + build)


def _download(build: int) -> str:
    version = "5.3.0" if build else "5.1.0"
    rows = "".join(
        f"<tr><td><a href='/files/example-{version}-{kind}.tar.gz'>"
        f"example-{version}-{kind}.tar.gz</a></td></tr>"
        for kind in ("linux-x86_64", "linux-arm64", "macos", "windows", "source", "docs")
    )
    prose = (
        "<p>Every release is signed; check the signature before you install it, as the"
        " installation page explains step by step for each platform we build for.</p>"
    ) * 4  # a prose page with a table of files, not a listing
    text = f"<h1>Download</h1>{prose}<table>{rows}</table>"
    return _frame("Download", text, 2025 + build)


def _audit(origin: str, db: str) -> dict:
    """An audit reading every page (``--full-sample``): each edit is compared."""
    printed = io.StringIO()
    command = ["audit", origin, "--db", db, "--delay", "0", "--sample", "60", "--full-sample"]
    with contextlib.redirect_stdout(printed):
        main([*command, "--json"])
    return json.loads(printed.getvalue())


def build_site(root: Path, build: int) -> None:
    """One build of the documentation site (``build`` 0 or 1)."""
    pages = {f"/{t}/": _topic(t, build) for t in TOPICS} | {"/download/": _download(build)}
    urls = []
    for path, html in pages.items():
        target = root / path.strip("/") / "index.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html)
        urls.append(
            f"<url><loc>{{{{origin}}}}{path}index.html</loc>"
            f"<lastmod>{_lastmod(path.strip('/'), build)}</lastmod></url>"
        )
    sitemap = (
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(urls)}</urlset>'
    )
    (root / "sitemap.xml").write_text(sitemap)


def test_small_real_edits_keep_an_accurate_documentation_site_from_condemnation(tmp_path, db_url):
    for build in (0, 1):
        build_site(tmp_path / f"v{build}", build)
    with LoopbackServer(root=tmp_path / "v0") as server:
        _audit(server.origin, db_url)
        server.root = tmp_path / "v1"
        second = _audit(server.origin, db_url)
        from auditor.history import History

        with History.open(db_url) as history:
            pages = {
                p.loc.removeprefix(server.origin): p for p in history.latest_pages(server.origin)
            }

    assert second["verdict"] in ("trusted", "inconclusive")
    assert all(s["verdict"] != "untrusted" for s in second["segments"])
    assert pages["/download/index.html"].content_changed  # version numbers in link cells
    assert pages[f"/{RECAPITALISED}/index.html"].content_changed  # case only
    for stub in STUBS:
        page = pages[f"/{stub}/index.html"]
        assert not page.content_changed and page.own_frame_changed  # ambiguous
    assert not pages["/topic-9/index.html"].content_changed  # the footer year alone
    changes = second["changes"]
    assert changes["ambiguous"] >= len(STUBS)
    assert changes["lastmod_advanced"] - changes["both"] == 0  # no move without a change
