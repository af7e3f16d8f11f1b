"""Fuzzing whole walks: a generated file on disk, and a generated site on loopback.

Properties:

- a walk never raises; every problem carries a contract code (docs/commands/walk.md);
- every URL is emitted once, on an origin the file may use;
- what a well-formed file holds is all emitted, whatever its siblings do (404,
  500, HTML, garbage, loops, cross-host children, redirects);
- no file is read twice;
- the ``walk`` command's fast JSONL path writes exactly what the entries say
  (``write_walk_jsonl`` against ``jsonl_line`` of each entry).
"""

from __future__ import annotations

import gzip
import io
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from auditor.http import HttpOptions
from auditor.models import PROBLEM_CODES, SitemapEntry
from auditor.walker import Walk, WalkOptions
from auditor.walker.jsonl import jsonl_line, write_walk_jsonl
from tests.fuzz.budget import fuzz
from tests.fuzz.mutations import mutated
from tests.fuzz.sitemaps import (
    ORIGIN,
    Entry,
    Sitemap,
    encode,
    encoded_sitemaps,
    expected,
    gzip_members,
    sitemaps,
)
from tests.loopback import LoopbackServer, send

TIMEOUT = 5.0


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("walk")


_counter = itertools.count()


def walk_both_ways(target: str, **http: object) -> tuple[list[SitemapEntry], Walk]:
    """Walk ``target`` twice: as entries and as the walk command's JSONL; check they agree."""
    options = WalkOptions(http=HttpOptions(retries=0, timeout=TIMEOUT, **http))  # type: ignore[arg-type]
    walk = Walk(target, options)
    entries = list(walk)
    again = Walk(target, options)
    out = io.StringIO()
    count = write_walk_jsonl(again, out)
    assert out.getvalue() == "".join(jsonl_line(e) for e in entries)
    assert count == len(entries)
    assert again.problems == walk.problems
    return entries, walk


def assert_walk_invariants(entries: list[SitemapEntry], walk: Walk) -> None:
    for problem in walk.problems:
        assert problem.code in PROBLEM_CODES, problem
        assert problem.detail
    locs = [e.loc for e in entries]
    assert len(locs) == len(set(locs)), "a URL was emitted twice"
    for entry in entries:
        assert entry.lastmod is None or entry.lastmod.utcoffset().total_seconds() == 0
        assert entry.lastmod is None or entry.lastmod_raw
        assert entry.lastmod_precision in (
            None,
            "year",
            "month",
            "day",
            "minute",
            "second",
            "fraction",
        )


def expected_entries(sitemap: Sitemap) -> list[tuple[str, str | None]]:
    """(loc, lastmod_raw) of each entry a walk emits for a file (empty lastmods are none)."""
    seen: set[str] = set()
    out = []
    for loc, lastmod, _news in expected(sitemap):
        if loc and loc not in seen:
            seen.add(loc)
            out.append((loc, lastmod or None))
    return out


# -- one file on disk --------------------------------------------------------------------------


@fuzz(40)
@given(
    encoded_sitemaps(kinds=("urlset", "rss", "atom", "text")),
    st.none() | st.lists(st.integers(0, 1 << 16), max_size=2),
)
def test_a_local_file_walks_to_exactly_its_entries(folder, case, members):
    sitemap, data = case
    if members is not None:
        data = gzip_members(data, members)
    path = folder / f"f{next(_counter)}.xml"
    path.write_bytes(data)
    entries, walk = walk_both_ways(str(path))
    assert_walk_invariants(entries, walk)
    assert [(e.loc, e.lastmod_raw) for e in entries] == expected_entries(sitemap)
    assert all(e.sitemap == str(path) for e in entries)
    invalid = [p for p in walk.problems if p.code == "invalid-lastmod"]
    assert bool(invalid) == any(e.lastmod_raw and e.lastmod is None for e in entries)


@fuzz(40)
@given(
    encoded_sitemaps(kinds=("urlset", "rss", "atom")),
    st.integers(0, 1 << 16),
    st.sampled_from(["plain", "gzip-then-cut", "cut-then-gzip"]),
)
def test_a_local_file_cut_anywhere_keeps_its_entries_before_the_cut(folder, case, cut, how):
    sitemap, data = case
    if how == "gzip-then-cut":
        data = gzip.compress(data, mtime=0)
    cut %= len(data)
    data = data[:cut]
    if how == "cut-then-gzip":
        data = gzip.compress(data, mtime=0)
    path = folder / f"c{next(_counter)}.xml"
    path.write_bytes(data)
    entries, walk = walk_both_ways(str(path))
    assert_walk_invariants(entries, walk)
    got = [(e.loc, e.lastmod_raw) for e in entries]
    want = expected_entries(sitemap)
    assert got == want[: len(got)]
    codes = {p.code for p in walk.problems}
    assert codes & {"not-well-formed", "not-a-sitemap"}, "a cut file read as whole"
    event(f"cut file: {len(got)}/{len(want)} entries kept")


@fuzz(40)
@given(st.data())
def test_a_mangled_local_file_ends_in_named_problems(folder, data):
    _, clean = data.draw(encoded_sitemaps(kinds=("urlset", "sitemapindex", "rss", "atom", "text")))
    broken = data.draw(mutated(clean))
    if data.draw(st.booleans()):
        broken = gzip.compress(broken, mtime=0)
    path = folder / f"m{next(_counter)}.xml"
    path.write_bytes(broken)
    entries, walk = walk_both_ways(str(path))
    assert_walk_invariants(entries, walk)
    assert walk.files and (walk.files[0].readable or walk.problems)


# -- a site on loopback ------------------------------------------------------------------------

FAULTS = ("good", "good", "good", "404", "500", "html", "garbage", "cut", "gzip", "redirect")


@dataclass(frozen=True)
class Child:
    """One sub-sitemap of the generated site and how it is served."""

    name: str
    sitemap: Sitemap
    fault: str


@st.composite
def sites(draw: st.DrawFn) -> tuple[list[Child], list[str], str]:
    """Children (each with its own paths), the robots.txt style, and the index's extras."""
    count = draw(st.integers(1, 5))
    children = []
    for i in range(count):
        sitemap = draw(sitemaps(kinds=("urlset", "rss", "atom", "text"), extra="", max_entries=6))
        entries = tuple(
            replace(e, loc=e.loc.replace(ORIGIN, f"{ORIGIN}/c{i}", 1)) for e in sitemap.entries
        )
        sitemap = Sitemap(sitemap.kind, entries, sitemap.style)
        children.append(Child(f"c{i}.xml", sitemap, draw(st.sampled_from(FAULTS))))
    extras = draw(st.lists(st.sampled_from(["self", "dup", "cross", "relative", "missing"])))
    robots = draw(st.sampled_from(["index", "children", "404", "garbage", "bom-crlf"]))
    return children, extras, robots


def _with_origin(sitemap: Sitemap, origin: str) -> Sitemap:
    entries = tuple(
        Entry(e.loc.replace(ORIGIN, origin, 1), e.lastmod, e.news) for e in sitemap.entries
    )
    return Sitemap(sitemap.kind, entries, sitemap.style)


def _route(status: int, body: bytes, ctype: str = "application/xml", **headers: str) -> Callable:
    return lambda handler: send(handler, status, body, ctype, headers)


def serve_site(
    server: LoopbackServer, children: list[Child], extras: list[str], robots: str
) -> None:
    origin = server.origin
    routes: dict[str, Callable] = {}
    listed = [f"{origin}/{c.name}" for c in children]
    for extra in extras:
        listed.append(
            {
                "self": f"{origin}/index.xml",
                "dup": listed[0],
                "cross": f"http://127.0.0.2:{server.port}/c0.xml",
                "relative": "c0.xml",
                "missing": f"{origin}/missing.xml",
            }[extra]
        )
    index = Sitemap("sitemapindex", tuple(Entry(u) for u in listed))
    routes["/index.xml"] = _route(200, encode(index))
    for child in children:
        data = encode(_with_origin(child.sitemap, origin))
        routes[f"/{child.name}"] = {
            "good": _route(200, data),
            "404": _route(404, b"not found", "text/html"),
            "500": _route(500, b"oops", "text/html"),
            "html": _route(200, b"<!doctype html><html><body>log in</body></html>", "text/html"),
            "garbage": _route(200, b"\x00\x01garbage\xff" * 10, "application/octet-stream"),
            "cut": _route(200, data[: len(data) // 2]),
            "gzip": _route(200, gzip.compress(data, mtime=0), "application/gzip"),
            "redirect": _route(301, b"", Location=f"/moved/{child.name}"),
        }[child.fault]
        routes[f"/moved/{child.name}"] = _route(200, data)
    sitemap_lines = {
        "index": [f"{origin}/index.xml"],
        "children": listed[: len(children)],
    }.get(robots, [f"{origin}/index.xml"])
    text = "User-agent: *\nDisallow: /private\n" + "".join(f"Sitemap: {u}\n" for u in sitemap_lines)
    routes["/robots.txt"] = {
        "404": _route(404, b"", "text/plain"),
        "garbage": _route(200, b"\xff\xfe\x00garbage", "text/plain"),
        "bom-crlf": _route(
            200, b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(), "text/plain"
        ),
    }.get(robots, _route(200, text.encode(), "text/plain"))
    if robots in ("404", "garbage"):
        routes["/sitemap.xml"] = routes["/index.xml"]
    server.routes.clear()
    server.routes.update(routes)
    server.log.clear()


@fuzz(30)
@given(sites())
def test_a_walk_of_a_hostile_site_keeps_every_good_file_whole(loopback, site):
    children, extras, robots = site
    serve_site(loopback, children, extras, robots)
    event(f"robots.txt: {robots}")
    for child in children:
        event(f"child: {child.fault}")
    started = time.monotonic()
    entries, walk = walk_both_ways(loopback.origin)
    elapsed = time.monotonic() - started
    assert_walk_invariants(entries, walk)
    emitted = {(e.loc, e.lastmod_raw) for e in entries}
    for child in children:
        if child.fault in ("good", "gzip", "redirect"):
            want = expected_entries(_with_origin(child.sitemap, loopback.origin))
            assert set(want) <= emitted, f"{child.name} ({child.fault}) lost entries"
    # On the site's origin: its home page may be written without a path (a text sitemap
    # cut after "http://127.0.0.1:PORT" lists exactly that).
    assert all(e.loc == loopback.origin or e.loc.startswith(loopback.origin + "/") for e in entries)
    # Each walk (there are two) asks for each path at most once.
    paths = [p for p in loopback.paths() if p != "/robots.txt"]
    for path, count in ((p, paths.count(p)) for p in set(paths)):
        assert count <= 2, f"{path} requested {count} times in two walks"
    requests = len(loopback.log)
    assert elapsed < requests * TIMEOUT + 10  # every request bounded (loopback: far less)
