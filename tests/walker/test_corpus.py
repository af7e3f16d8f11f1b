"""The walker over the shared real-world corpus (``CORPUS`` in tests/conftest.py).

Real sites' sitemaps and other projects' test fixtures, read in place (never copied): as local
files, through loopback mirrors of their original hosts, and, for robots.txt files, through
``sitemaps_from_robots``. Every test skips cleanly when the corpus is absent.

``corpus_expected.tsv`` (beside this file) pins what the walker makes of every sitemap-like file,
checked by eye; its ``vs_manifest`` column marks where the MANIFEST's regex statistics
legitimately differ from the walker, and why.
"""

from __future__ import annotations

import codecs
import csv
import gzip
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from auditor.http import HttpOptions
from auditor.models import SitemapEntry
from auditor.walker import Walk, WalkOptions, sitemaps_from_robots, walk
from tests.loopback import LoopbackServer, send

CORPUS_DIR = Path(__file__).resolve().parents[3] / "shared" / "corpus"  # as the corpus fixture
EXPECTED_TSV = Path(__file__).with_name("corpus_expected.tsv")

#: The walker problem codes (contract, docs/commands/walk.md): written out here so a drift
#: in models.py shows.
CONTRACT_CODES = frozenset(
    {
        "http-error",
        "timeout",
        "too-large",
        "not-well-formed",
        "not-a-sitemap",
        "forbidden-xml",
        "cross-host",
        "relative-url",
        "nested-index",
        "index-loop",
        "redirect",
        "too-many-redirects",
        "too-many-urls",
        "duplicate-url",
        "invalid-lastmod",
        "wrong-namespace",
        "max-files",
    }
)
PRECISIONS = frozenset({"year", "month", "day", "minute", "second", "fraction"})
#: Index children of a local file are http URLs the network guard refuses: fail fast.
OPTIONS = WalkOptions(http=HttpOptions(timeout=5.0, retries=0, backoff=0.0))
ABSENT = ["corpus-absent"]  # one placeholder case: the corpus fixture skips it

SITES = "sitemaps"
PEERS = "peer_fixtures"
CC = f"{PEERS}/crawler-commons/src/test/resources"
SCRAPY = f"{PEERS}/scrapy_inline"


# -- what the corpus holds ------------------------------------------------------------------
def _is_robots(rel: str) -> bool:
    """robots.txt files: the sites' own, crawler-commons' robots/ folder, scrapy's inline ones."""
    return "robots" in rel.lower()


def _corpus_files() -> tuple[list[str], list[str]]:
    if not CORPUS_DIR.is_dir():
        return [], []
    sitemaps: list[str] = []
    robots: list[str] = []
    for top in (SITES, PEERS):
        for path in sorted((CORPUS_DIR / top).rglob("*")):
            if not path.is_file() or path.name == "INDEX.tsv":
                continue
            rel = path.relative_to(CORPUS_DIR).as_posix()
            (robots if _is_robots(rel) else sitemaps).append(rel)
    return sitemaps, robots


def _manifest() -> dict[str, dict[str, str]]:
    path = CORPUS_DIR / "MANIFEST.tsv"
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        return {row["local_file"]: row for row in csv.DictReader(handle, delimiter="\t")}


@dataclass(frozen=True)
class Expected:
    """One row of corpus_expected.tsv; ``*`` in a column means not pinned there."""

    kind: str
    entries: str
    with_lastmod: str
    children: str
    problems: str
    vs_manifest: str
    note: str


def _expected() -> dict[str, Expected]:
    lines = [
        line
        for line in EXPECTED_TSV.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    rows = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    return {
        row["file"]: Expected(**{k: row[k] or "" for k in Expected.__dataclass_fields__})
        for row in rows
    }


SITEMAP_FILES, ROBOTS_FILES = _corpus_files()
MANIFEST = _manifest()
EXPECTED = _expected()


def _manifest_checked(rel: str) -> bool:
    row = MANIFEST[rel]
    root = row["root"].rpartition(":")[2]
    if _is_robots(rel):
        return False
    return root in ("urlset", "sitemapindex") or (not root and row["n_text_urls"] != "")


MANIFEST_FILES = sorted(rel for rel in MANIFEST if _manifest_checked(rel))


# -- helpers ---------------------------------------------------------------------------------
def _walk(target: str | Path, options: WalkOptions = OPTIONS) -> tuple[Walk, list[SitemapEntry]]:
    w = walk(str(target), options)
    return w, list(w)


def _codes(w: Walk) -> list[str]:
    return sorted(p.code for p in w.problems)


def _problems_text(w: Walk) -> str:
    counts = Counter(p.code for p in w.problems)
    return ",".join(c if n == 1 else f"{c}*{n}" for c, n in sorted(counts.items())) or "-"


def _summary(w: Walk, entries: list[SitemapEntry]) -> dict[str, str]:
    kind = w.files[0].kind
    return {
        "kind": kind,
        "entries": str(len(entries)),
        "with_lastmod": str(sum(e.lastmod is not None for e in entries)),
        "children": str(len(w.files) - 1) if kind == "sitemapindex" else "-",
        "problems": _problems_text(w),
    }


def _assert_sane(w: Walk, entries: list[SitemapEntry], source: str) -> None:
    """What must hold for any file: contract codes only, clean absolute locs, UTC dates."""
    assert {p.code for p in w.problems} <= CONTRACT_CODES, w.problems
    assert all(p.sitemap and isinstance(p.detail, str) for p in w.problems)
    assert w.files and w.files[0].url == source
    locs = [e.loc for e in entries]
    assert len(locs) == len(set(locs)), "an emitted loc repeats"
    for e in entries:
        parts = urlsplit(e.loc)
        assert parts.scheme in ("http", "https") and parts.netloc, e.loc
        assert e.loc == e.loc.strip(), e.loc
        assert e.sitemap == source
        if e.lastmod is None:
            assert e.lastmod_precision is None
            if e.lastmod_raw:  # written but not understood: must be reported
                assert "invalid-lastmod" in _codes(w), e
        else:
            assert e.lastmod.utcoffset() == timedelta(0), e
            assert e.lastmod_precision in PRECISIONS and e.lastmod_raw, e
        if e.news_publication_date is not None:
            assert e.news_publication_date.utcoffset() == timedelta(0), e
    first = w.files[0]
    assert first.urls == len(entries)  # a local walk emits only from the file itself
    if first.kind == "unreadable":
        assert not entries and w.problems and not first.readable


def _mirror(
    serve: Callable[..., LoopbackServer],
    folder: Path,
    rewrites: dict[str, str],
    mount: str = "/",
) -> LoopbackServer:
    """Serve ``folder`` at ``mount`` on loopback with each original origin in the files rewritten
    as ``rewrites`` says: what shared an origin still does, what was foreign stays foreign.
    ``rewrites`` may be filled after the call (the server's origin is known only then)."""
    server = serve()

    def route(path: Path) -> Callable:
        def handle(handler: object) -> None:
            body = path.read_bytes()
            for old, new in rewrites.items():
                body = body.replace(old.encode(), new.encode())
            send(handler, 200, body, "application/xml")  # type: ignore[arg-type]

        return handle

    for path in folder.rglob("*"):
        if path.is_file() and not path.name.endswith(".gz"):
            server.routes[mount + path.relative_to(folder).as_posix()] = route(path)
    return server


def _robots_text(raw: bytes) -> str:
    """robots.txt bytes as text: UTF-16 with a BOM, else UTF-8 (BOM or not), else Latin-1."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _at(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# -- every file ------------------------------------------------------------------------------
@pytest.mark.parametrize("rel", SITEMAP_FILES or ABSENT)
def test_every_sitemap_file_walks_as_pinned(corpus, rel):
    """No exception, ever; problems only from the contract's codes; what corpus_expected says."""
    path = corpus / rel
    w, entries = _walk(path)  # an exception fails the test

    _assert_sane(w, entries, str(path))
    expected = EXPECTED.get(rel)
    assert expected is not None, f"{rel}: not in corpus_expected.tsv; check it by eye, add a row"
    got = _summary(w, entries)
    pinned = {k: getattr(expected, k) for k in got if getattr(expected, k) != "*"}
    assert {k: got[k] for k in pinned} == pinned, expected.note


def test_expectations_name_only_corpus_files(corpus):
    assert set(EXPECTED) <= set(SITEMAP_FILES)


# -- the MANIFEST's statistics ---------------------------------------------------------------
@pytest.mark.parametrize("rel", MANIFEST_FILES or ABSENT)
def test_counts_agree_with_manifest(corpus, rel):
    """urlset: entries = n_url - relative locs (nothing else is dropped from a local file; no
    corpus file repeats a loc), with lastmod = n_lastmod - unparseable. Index: every <sitemap>
    seen, each absolute child tried (an http-error: the network guard refuses it), relative ones
    reported. Where the regex miscounts, corpus_expected.tsv says ``differs`` and why."""
    row = MANIFEST[rel]
    w, entries = _walk(corpus / rel)
    root = row["root"].rpartition(":")[2]
    relative = int(row["relative_locs"] or 0)
    dated = int(row["n_lastmod"] or 0) - int(row["unparseable_lastmod"] or 0)
    codes = _codes(w)

    if root == "urlset":
        kept = int(row["n_url"]) - relative
        assert not (relative and kept), "partial relative locs: pin the file's counts by hand"
        want = (kept, dated if kept else 0)
        got = (len(entries), sum(e.lastmod is not None for e in entries))
        assert ("relative-url" in codes) == bool(relative)
    elif root == "sitemapindex":
        index, children = w.files[0], w.files[1:]
        assert index.kind == "sitemapindex"
        assert index.records == int(row["n_sitemap"])
        kept = int(row["n_sitemap"]) - relative
        want = (kept, dated if kept else 0)
        got = (len(children), sum(c.index_lastmod is not None for c in children))
        assert codes.count("http-error") == len(children)
        assert all(c.kind == "unreadable" and c.parent == str(corpus / rel) for c in children)
        assert ("relative-url" in codes) == bool(relative)
        assert ("invalid-lastmod" in codes) == (row["unparseable_lastmod"] not in ("", "0"))
    else:
        want = (int(row["n_text_urls"]), 0)
        got = (len(entries), sum(e.lastmod is not None for e in entries))

    expected = EXPECTED.get(rel)
    if expected is not None and expected.vs_manifest == "differs":
        # the walker's own value is pinned (or tested) elsewhere; the override must still matter
        assert got != want, f"{rel}: the manifest now agrees, drop 'differs' from the TSV"
    else:
        assert got == want


# -- the broken files the MANIFEST names -------------------------------------------------------
def test_newline_before_the_xml_declaration_is_still_read(corpus):
    site = corpus / SITES / "10beasts+10beasts.github.io"
    old_path = site / "at_377c2d8" / "post-sitemap.xml"
    assert old_path.read_bytes().startswith(b"\n<?xml")
    old_w, old = _walk(old_path)
    new_w, new = _walk(site / "post-sitemap.xml")

    assert old_w.problems == [] and new_w.problems == []
    assert old_w.files[0].kind == "urlset"
    assert [(e.loc, e.lastmod, e.lastmod_raw) for e in old] == [
        (e.loc, e.lastmod, e.lastmod_raw) for e in new
    ]
    assert len(old) == 14

    old_index, _ = _walk(site / "at_377c2d8" / "sitemap_index.xml")
    new_index, _ = _walk(site / "sitemap_index.xml")
    assert old_index.files[0].kind == "sitemapindex"
    assert [(f.url, f.index_lastmod) for f in old_index.files[1:]] == [
        (f.url, f.index_lastmod) for f in new_index.files[1:]
    ]


def test_html_served_as_a_sitemap_is_not_a_sitemap(corpus, serve):
    path = corpus / SITES / "ces-repo+ces-static-backup" / "wp-sitemap.xml"
    w, entries = _walk(path)
    assert entries == []
    assert [(p.code, "html" in p.detail) for p in w.problems] == [("not-a-sitemap", True)]
    assert not w.readable

    # the same page over HTTP, answered 200 as a sitemap would be
    server = serve(
        routes={"/wp-sitemap.xml": lambda h: send(h, 200, path.read_bytes(), "text/html")}
    )
    w, entries = _walk(server.url("/wp-sitemap.xml"))
    assert entries == []
    assert [(p.code, "html" in p.detail) for p in w.problems] == [("not-a-sitemap", True)]


def test_dangling_child_reference_is_an_http_error(corpus, serve):
    """The index lists sitemap1.xml; the file is sitemap_1.xml (and its pages are on blogspot)."""
    folder = corpus / SITES / "Andrescoto487+actualidadeurovision_sitemap"
    rewrites: dict[str, str] = {}
    server = _mirror(serve, folder, rewrites, mount="/actualidadeurovision_sitemap/")
    rewrites["https://andrescoto487.github.io"] = server.origin
    index = server.url("/actualidadeurovision_sitemap/sitemap_index.xml")
    child = server.url("/actualidadeurovision_sitemap/sitemap1.xml")

    w, entries = _walk(index)

    assert entries == []
    assert [(p.sitemap, p.code, "404" in p.detail) for p in w.problems] == [
        (child, "http-error", True)
    ]
    assert [(f.url, f.kind, f.status) for f in w.files] == [
        (index, "sitemapindex", 200),
        (child, "unreadable", 404),
    ]
    assert w.files[1].index_lastmod == _at(2025, 5, 30)

    # the real file, fetched where it lives: all 271 pages are on another host
    real = server.url("/actualidadeurovision_sitemap/sitemap_1.xml")
    w, entries = _walk(real)
    assert entries == []
    assert [(p.code, p.detail.startswith("271 ")) for p in w.problems] == [("cross-host", True)]


def test_generation_time_lastmod_comes_through_unchanged(corpus, serve):
    """caroleshiber.com: every lastmod (index and pages) is the moment the files were written."""
    rewrites: dict[str, str] = {}
    server = _mirror(serve, corpus / SITES / "jjpanick+CS-Sitemaps", rewrites)
    rewrites["https://caroleshiber.com"] = server.origin
    stamp = _at(2025, 8, 16, 6, 45, 21)

    w, entries = _walk(server.url("/sitemap_index.xml"))

    assert w.problems == []
    assert [(f.url, f.kind, f.urls, f.index_lastmod) for f in w.files] == [
        (server.url("/sitemap_index.xml"), "sitemapindex", 0, None),
        (server.url("/sitemap_products_1.xml"), "urlset", 695, stamp),
        (server.url("/sitemap_categories.xml"), "urlset", 56, stamp),
    ]
    assert len(entries) == 751
    assert {(e.lastmod, e.lastmod_precision, e.lastmod_raw) for e in entries} == {
        (stamp, "second", "2025-08-16T06:45:21Z")
    }
    assert all(e.loc.startswith(server.origin + "/") for e in entries)


def test_yoast_index_over_loopback_reads_children_newest_first(corpus, serve):
    site = corpus / SITES / "10beasts+10beasts.github.io"
    rewrites: dict[str, str] = {}
    server = _mirror(serve, site, rewrites)
    rewrites["http://www.10beasts.cn"] = server.origin
    locs = {
        name: [
            e.loc.replace("http://www.10beasts.cn", server.origin) for e in _walk(site / name)[1]
        ]
        for name in ("post-sitemap.xml", "affiliate-links-sitemap.xml", "page-sitemap.xml")
    }
    home = server.url("/")

    for index in ("/sitemap_index.xml", "/at_377c2d8/sitemap_index.xml"):  # HEAD, leading newline
        w, entries = _walk(server.url(index))
        # index lastmods: post 2017-04-17, affiliate-links 2017-04-10, page 2017-02-10
        assert [f.url for f in w.files[1:]] == [
            server.url("/post-sitemap.xml"),
            server.url("/affiliate-links-sitemap.xml"),
            server.url("/page-sitemap.xml"),
        ]
        # the home page is listed by post- and page-sitemap: emitted once, the repeat reported
        assert [e.loc for e in entries] == (
            locs["post-sitemap.xml"]
            + locs["affiliate-links-sitemap.xml"]
            + [u for u in locs["page-sitemap.xml"] if u != home]
        )
        assert len(entries) == 26
        # served from /at_377c2d8/, the snapshot's index lists children above its directory:
        # Google's "URL not allowed" (they are still read)
        outside = [(server.url(index), "url-not-allowed")] if index != "/sitemap_index.xml" else []
        assert [(p.sitemap, p.code) for p in w.problems] == [
            *outside,
            (server.url("/page-sitemap.xml"), "duplicate-url"),
        ]
        assert sum(e.lastmod is not None for e in entries) == 25


def test_yoast_index_served_on_the_bare_host_lists_its_www_twin(corpus, serve):
    """10beasts' real index names its children on http://www.10beasts.cn: served as the
    bare host's index, every child is on the www twin (Search Console's "Path mismatch:
    Includes www", the stale index of a move), and none is read."""
    site = corpus / SITES / "10beasts+10beasts.github.io"
    rewrites: dict[str, str] = {}
    server = _mirror(serve, site, rewrites)
    rewrites["http://www.10beasts.cn"] = server.origin.replace("127.0.0.1", "www.127.0.0.1")
    w, entries = _walk(server.url("/sitemap_index.xml"))
    assert entries == []
    assert [p.code for p in w.problems] == ["cross-host", "path-mismatch"]
    detail = w.problems[1].detail
    assert detail.startswith("Path mismatch: Includes www: 3 sitemap(s)")
    assert "after a move?" in detail


def test_sitemap_host_pages_count_only_through_robots_cross_submission(corpus, serve):
    """mykumi: the index and its children live on sitemap.mykumi.com, the pages on mykumi.com.
    Walked as a URL, every page is cross-host; declared by the page host's robots.txt (the
    protocol's cross-submission; this robots.txt is ours, the corpus has none), all count."""
    folder = corpus / SITES / "mykumishop+mykumi-sitemaps" / "dist"
    rewrites: dict[str, str] = {}
    sitemap_host = _mirror(serve, folder, rewrites)
    page_host = serve()
    rewrites["https://sitemap.mykumi.com"] = sitemap_host.origin
    rewrites["https://mykumi.com"] = page_host.origin
    index = sitemap_host.url("/de-index.xml")
    robots = f"User-agent: *\nSitemap: {index}\n".encode()
    page_host.routes["/robots.txt"] = lambda h: send(h, 200, robots, "text/plain")
    per_file = {p.name: len(_walk(p)[1]) for p in folder.glob("*.xml") if p.name != "de-index.xml"}

    w, entries = _walk(index)
    assert entries == []
    assert len(w.files) == 19 and all(f.readable for f in w.files)
    dropped = {p.sitemap: p for p in w.problems}
    assert {p.code for p in w.problems} == {"cross-host"}
    assert {
        urlsplit(u).path[1:]: int(p.detail.split()[0].replace(",", "")) for u, p in dropped.items()
    } == per_file

    w, entries = _walk(page_host.origin)
    assert w.problems == []
    assert len(entries) == sum(per_file.values()) == 36_193
    assert all(e.loc.startswith(page_host.origin + "/") and e.lastmod is None for e in entries)
    assert all(f.via_robots for f in w.files)


def test_index_that_lists_itself_is_an_index_loop(corpus, serve):
    """advertools' index lists itself (at raw.githubusercontent.com) and three other hosts."""
    folder = corpus / PEERS / "advertools" / "tests" / "data" / "sitemap_testing"
    rewrites: dict[str, str] = {}
    server = _mirror(serve, folder, rewrites)
    raw = (
        "https://raw.githubusercontent.com/eliasdabbas/advertools/master/tests/data/sitemap_testing"
    )
    rewrites[raw] = server.origin
    index = server.url("/sitemap_index.xml")

    w, entries = _walk(index)

    assert entries == []
    assert [f.url for f in w.files] == [index]
    assert sorted((p.sitemap, p.code) for p in w.problems) == [
        (index, "cross-host"),
        (index, "index-loop"),
    ]
    cross = next(p for p in w.problems if p.code == "cross-host")
    assert cross.detail.startswith("3 ")


def test_index_entries_without_loc_are_not_silently_lost(corpus):
    """crawler-commons' sitemap.index.xml: 15 <sitemap> elements whose URL is bare text, no <loc>.
    crawler-commons reads 15 children leniently; auditor counts only <loc> (contract) and reports
    the records it could not use rather than dropping them without a word."""
    w, _ = _walk(corpus / CC / "sitemaps" / "sitemap.index.xml")
    assert w.files[0].kind == "sitemapindex" and w.files[0].records == 15
    assert len(w.files) == 1  # no child read
    [problem] = [p for p in w.problems if p.code == "not-well-formed"]
    assert problem.detail.startswith("15 entries without a URL")


# -- twins, bumps, news ----------------------------------------------------------------------
ADVERTOOLS_DATA = f"{PEERS}/advertools/tests/data/sitemap_testing"


@pytest.mark.parametrize(
    ("plain", "twin", "gzipped", "host"),
    [
        (
            f"{SITES}/AmpereComputing+OpenBLAS/gh-pages_latest/docs/sitemap.xml",
            f"{SITES}/AmpereComputing+OpenBLAS/gh-pages_latest/docs/sitemap.xml.gz",
            True,
            None,
        ),
        (
            f"{PEERS}/trafilatura/tests/resources/sitemap.xml",
            f"{PEERS}/trafilatura/tests/resources/sitemap.xml.gz",
            True,
            None,
        ),
        (  # advertools' gzip'd copy names the host www.gzipped.com, on purpose
            f"{ADVERTOOLS_DATA}/regular_sitemap.xml",
            f"{ADVERTOOLS_DATA}/zipped_sitemap.xml.gz",
            True,
            "www.gzipped.com",
        ),
        (  # named .gz, plain XML inside: judged by magic bytes
            f"{ADVERTOOLS_DATA}/regular_sitemap.xml",
            f"{ADVERTOOLS_DATA}/regular_sitemap.xml.gz",
            False,
            None,
        ),
    ],
)
def test_gzip_twin_reads_like_the_plain_file(corpus, plain, twin, gzipped, host):
    assert (corpus / twin).read_bytes().startswith(b"\x1f\x8b") == gzipped
    plain_w, plain_entries = _walk(corpus / plain)
    twin_w, twin_entries = _walk(corpus / twin)
    assert twin_w.files[0].gzipped is gzipped and not plain_w.files[0].gzipped
    assert twin_w.problems == plain_w.problems == []
    renamed = [(e.loc.replace(host or "\0", "www.example.com"), *e[1:4]) for e in twin_entries]
    assert renamed == [tuple(e[:4]) for e in plain_entries]
    if gzipped:
        assert twin_w.files[0].bytes_read == len(gzip.decompress((corpus / twin).read_bytes()))


def test_build_date_lastmod_bumps_between_builds(corpus):
    """OpenBLAS (MkDocs): every lastmod is the build date, so each rebuild bumps every page."""
    docs = corpus / SITES / "AmpereComputing+OpenBLAS"
    _, oldest = _walk(docs / "gh-pages_oldest" / "docs" / "sitemap.xml.gz")
    _, latest = _walk(docs / "gh-pages_latest" / "docs" / "sitemap.xml.gz")
    assert {(e.lastmod, e.lastmod_precision) for e in oldest} == {(_at(2024, 4, 5), "day")}
    assert {(e.lastmod, e.lastmod_precision) for e in latest} == {(_at(2025, 2, 7), "day")}
    assert {e.loc for e in oldest} < {e.loc for e in latest}
    assert len(latest) - len(oldest) == 1


@pytest.mark.parametrize(
    "rel",
    sorted(r for r in MANIFEST if MANIFEST[r]["n_news_publication_date"] not in ("", "0"))
    or ABSENT,
)
def test_news_publication_dates_are_kept(corpus, rel):
    _, entries = _walk(corpus / rel)
    dated = [e for e in entries if e.news_publication_date is not None]
    assert len(dated) == int(MANIFEST[rel]["n_news_publication_date"])


def test_date_only_news_publication_date(corpus):
    path = corpus / SITES / "ThePOPPulse+thepoppulse-news-sitemap" / "news-sitemap.xml"
    _, entries = _walk(path)
    assert [(e.lastmod, e.news_publication_date) for e in entries] == [(None, _at(2025, 6, 3))]


# -- peer projects' own expectations ---------------------------------------------------------
EX = "http://www.example.com"

#: scrapy_inline/INDEX.tsv: file -> the locs scrapy's test expects, as auditor must emit them.
SCRAPY_URLSETS: dict[str, list[tuple[str, datetime | None]]] = {
    # scrapy's default (alternate links off): the <loc> only; xhtml:link alternates are not entries
    "test_spider_sitemap__test_alternate_url_locs__1.xml": [(f"{EX}/english/", None)],
    "test_utils_sitemap__test_alternate__1.xml": [(f"{EX}/english/", None)],
    # scrapy's filter tests drop by date in the spider; the file holds both
    "test_spider_sitemap__test_sitemap_filter__1.xml": [
        (f"{EX}/english/", _at(2010, 1, 1)),
        (f"{EX}/portuguese/", _at(2005, 1, 1)),
    ],
    "test_spider_sitemap__test_sitemap_filter_with_alternate_links__1.xml": [
        (f"{EX}/english/article_1/", _at(2010, 1, 1)),
        (f"{EX}/english/article_2/", _at(2015, 1, 1)),
    ],
    "test_spider_sitemap__test_sitemap_filter_with_rule__1.xml": [
        (f"{EX}/english/", None),
        (f"{EX}/portuguese/", None),
    ],
    "test_utils_sitemap__test_sitemap__1.xml": [
        (f"{EX}/", _at(2009, 8, 16)),
        (f"{EX}/Special-Offers.html", _at(2009, 8, 16)),
    ],
    "test_utils_sitemap__test_sitemap_str__1.xml": [(f"{EX}/", None)],
    "test_utils_sitemap__test_comment__1.xml": [(f"{EX}/", None)],
    # leading spaces in <loc> stripped; '<lastmod />' is no lastmod
    "test_utils_sitemap__test_sitemap_strip__1.xml": [
        (f"{EX}/", _at(2009, 8, 16)),
        (f"{EX}/2", None),
    ],
    "test_utils_sitemap__test_sitemap_wrong_ns__1.xml": [
        (f"{EX}/", _at(2009, 8, 16)),
        (f"{EX}/2", None),
    ],
    "test_utils_sitemap__test_sitemap_wrong_ns2__1.xml": [
        (f"{EX}/", _at(2009, 8, 16)),
        (f"{EX}/2", None),
    ],
    # differs by contract: scrapy yields http://127.0.0.1:8000/ (the entity left unexpanded);
    # auditor refuses any DTD outright (forbidden-xml) and reads nothing
    "test_utils_sitemap__test_xml_entity_expansion__1.xml": [],
    # '{loc}' is the unformatted template of scrapy's test (it fills in its mock server's URL):
    # a relative loc, dropped by contract (relative-url); '<loc></loc>' is ignored like scrapy
    "test_spider_sitemap__test_sitemap_rules_with_callable__1.xml": [],
    "test_spider_sitemap__test_sitemap_empty_loc__1.xml": [],
}

#: scrapy's index tests; auditor visits children newest first by index lastmod (scrapy keeps
#: document order), so the expected order here is auditor's.
SCRAPY_INDEXES: dict[str, list[tuple[str, datetime | None]]] = {
    "test_utils_sitemap__test_sitemap_index__1.xml": [
        (f"{EX}/sitemap2.xml.gz", _at(2005, 1, 1)),
        (f"{EX}/sitemap1.xml.gz", _at(2004, 10, 1, 18, 23, 17)),
    ],
    "test_spider_sitemap__test_sitemapindex_filter__1.xml": [
        (f"{EX}/sitemap2.xml", _at(2005, 1, 1)),
        (f"{EX}/sitemap1.xml", _at(2004, 1, 1, 20)),
    ],
    "test_spider_sitemap__test_sitemap_follow__1.xml": [(f"{EX}/sitemap1.xml", None)],
    "test_utils_sitemap__test_sitemap_blanklines__1.xml": [
        (f"{EX}/sitemap{n}.xml", _at(2013, 7, 15)) for n in (1, 2, 3)
    ],
}


@pytest.mark.parametrize("name", sorted(SCRAPY_URLSETS))
def test_scrapy_urlsets(corpus, name):
    w, entries = _walk(corpus / SCRAPY / name)
    assert [(e.loc, e.lastmod) for e in entries] == SCRAPY_URLSETS[name]
    if not entries:
        assert w.problems


@pytest.mark.parametrize("name", sorted(SCRAPY_INDEXES))
def test_scrapy_indexes(corpus, name):
    w, entries = _walk(corpus / SCRAPY / name)
    assert entries == []
    assert w.files[0].kind == "sitemapindex"
    assert [(f.url, f.index_lastmod) for f in w.files[1:]] == SCRAPY_INDEXES[name]


def test_scrapy_empty_body_fixture_is_not_a_sitemap(corpus):
    """The stored 'body' is scrapy's warning line; scrapy ignores it, auditor says why."""
    w, entries = _walk(
        corpus / SCRAPY / "test_spider_sitemap__test_parse_sitemap_empty_body__1.xml"
    )
    assert entries == [] and _codes(w) == ["not-a-sitemap"]


def test_crawler_commons_atom(corpus):
    _, entries = _walk(corpus / CC / "sitemaps" / "atom.xml")
    assert [(e.loc, e.lastmod) for e in entries] == [
        ("http://example.org/2003/12/13/atom03", _at(2003, 12, 13, 18, 30, 2))
    ]


def test_crawler_commons_rss_feed(corpus):
    """crawler-commons expects 4, the second from <guid isPermaLink="false">: RSS 2.0 says such
    a guid is not a URL, and auditor reads <link> only, so 3."""
    w, entries = _walk(corpus / CC / "rss" / "feed.rss")
    assert w.problems == [] and w.files[0].kind == "rss"
    assert [(e.loc, e.lastmod) for e in entries] == [
        ("https://www.example.com/blog/post/1", _at(2009, 9, 6, 16, 20)),
        ("https://www.example.com/foo?q=a&l=en", None),
        ("https://www.example.com/foo?q=a&l=fr", None),
    ]


def test_crawler_commons_rss_pub_dates(corpus):
    """testRSSPubDate: RFC 822 variants; a pubDate without a zone is not a date."""
    w, entries = _walk(corpus / CC / "rss" / "xmlRss_pubDate.xml")
    base = _at(2017, 1, 5, 12, 34, 50)
    want = [base + timedelta(seconds=n) for n in (1, 2, 3, 4)] + [None, None, None]
    got = [(e.loc, e.lastmod) for e in entries]
    assert got == [(f"{EX}/article_{n}", d) for n, d in enumerate(want, 1)]
    assert _codes(w) == ["invalid-lastmod"]  # "05 Jan 17 13:34:55"


@pytest.mark.parametrize(
    ("rel", "count", "codes"),
    [
        ("sitemaps/sitemap.ns.xml", 2, []),
        ("sitemaps/sitemap.badns.xml", 2, ["wrong-namespace"]),  # crawler-commons' lenient mode
        ("sitemaps/sitemap.txt", 2, []),
        ("sitemaps/sitemap.txt.gz", 5, []),
        ("sitemaps/xmlSitemap.gz", 5, []),
        ("sitemaps/sitemap-with-bom.txt", 2, []),
        ("sitemaps/extension/hebdenbridgetimes-articles-sitemap.xml", 74, []),
        ("sitemaps/extension/pagemaps-sitemap.xml", 2, []),
    ],
)
def test_crawler_commons_counts(corpus, rel, count, codes):
    w, entries = _walk(corpus / CC / rel)
    assert len(entries) == count
    assert _codes(w) == codes
    assert not any("\ufeff" in e.loc for e in entries)


def test_advertools_fixtures(corpus):
    data = corpus / PEERS / "advertools" / "tests" / "data" / "sitemap_testing"
    for name, rows in [("regular_sitemap.xml", 5), ("zipped_sitemap.xml.gz", 5)]:
        _, entries = _walk(data / name)  # test_regular_sitemap / test_gz_sitemap: 5 rows
        assert len(entries) == rows
    # advertools expects an exception; auditor reports the file and goes on
    w, entries = _walk(data / "error_sitemap.xml")
    assert entries == [] and "not-well-formed" in _codes(w)

    docs = corpus / PEERS / "advertools" / "docs" / "_static" / "sitemap_testing"
    w, _ = _walk(docs / "sitemap_index.xml")  # its image child's lastmod is "202-05-20"
    invalid = [p for p in w.problems if p.code == "invalid-lastmod"]
    assert len(invalid) == 1 and "202-05-20" in invalid[0].detail
    last = w.files[-1]  # undated children come last
    assert last.url.endswith("/image_sitemap.xml") and last.index_lastmod is None


def test_trafilatura_fixtures(corpus):
    res = corpus / PEERS / "trafilatura" / "tests" / "resources"
    w, entries = _walk(res / "sitemap.xml")
    assert len(entries) == 84 and w.problems == []
    w, entries = _walk(res / "sitemap2.xml")  # children, the second in CDATA; no URLs
    assert entries == []
    assert sorted(f.url for f in w.files[1:]) == [f"{EX}/sitemap1.xml.gz", f"{EX}/sitemap2.xml.gz"]
    _, entries = _walk(res / "sitemap-hreflang.xml")  # hreflang alternates are not entries
    assert [e.loc for e in entries] == [
        f"{EX}/english/page.html",
        f"{EX}/deutsch/page.html",
        f"{EX}/schweiz-deutsch/page.html",
    ]


# -- limits on real data ---------------------------------------------------------------------
def test_too_many_urls_on_a_real_file_reads_them_all(corpus):
    path = corpus / SITES / "ucsd-ets+tritongpt-sitemaps" / "berkeley_law.xml"
    w, entries = _walk(path, WalkOptions(http=OPTIONS.http, max_urls_per_file=10_000))
    assert len(entries) == 13_984
    assert _codes(w) == ["too-many-urls"]


def test_byte_cap_on_a_real_file_keeps_what_came_before(corpus):
    path = corpus / SITES / "ucsd-ets+tritongpt-sitemaps" / "berkeley_law.xml"
    _, full = _walk(path)
    w, entries = _walk(path, WalkOptions(http=HttpOptions(max_bytes=200_000)))
    assert 0 < len(entries) < len(full)
    assert [e.loc for e in entries] == [e.loc for e in full[: len(entries)]]
    assert w.files[0].bytes_read == 200_000
    # the file is well-formed; only the cap cut it: too-large is the whole story
    assert _codes(w) == ["too-large"]


def test_gzip_bomb_is_capped(corpus):
    path = corpus / PEERS / "scrapy" / "tests" / "sample_data" / "compressed" / "bomb-gzip.bin"
    w, entries = _walk(path, WalkOptions(http=HttpOptions(max_bytes=1_000_000)))
    assert entries == []
    assert w.files[0].gzipped and w.files[0].bytes_read <= 1_000_000
    assert set(_codes(w)) <= {"not-a-sitemap", "too-large"} and w.problems


# -- robots.txt ------------------------------------------------------------------------------
ROBOTS = f"{CC}/robots"
NEWSWEEK = ["http://www.newsweek.com/sitemap_index.xml"]
ADVERTOOLS_RTD = "https://advertools.readthedocs.io/sitemap_testing"
SCRAPY_INVALID_UTF8 = (
    "test_spider_sitemap__test_get_sitemap_urls_from_robotstxt_skips_invalid_utf8_urls__1.txt"
)
SCRAPY_ROBOTS = [
    "http://example.com/sitemap.xml",
    "http://example.com/sitemap-product-index.xml",
    "http://example.com/sitemap-uppercase.xml",  # written HTTP://: the scheme is case-free
]

#: file -> (site it is read for, the sitemaps expected); any robots file not named: none.
ROBOTS_EXPECTED: dict[str, tuple[str, list[str]]] = {
    # crawler-commons expects 3: it also takes the bare URL line that "forgot sitemap:"; auditor
    # reads Sitemap: lines only (DESIGN: discovery). Mixed case kept, as crawler-commons checks.
    f"{ROBOTS}/sitemap-robots.txt": (
        "http://domain.com",
        ["http://domain.com/sitemap.xml", "http://domain.com/dir/MixedCased-sitemap.xml"],
    ),
    f"{ROBOTS}/relative-sitemap-robots.txt": (
        "http://www.example.com",
        ["http://www.example.com/sitemap.xml"],
    ),
    f"{ROBOTS}/sitemap-robots-dedup.txt": (
        "http://example.org",
        ["http://example.org/sitemap.xml"],
    ),
    f"{ROBOTS}/format-errors-robots.txt": ("http://domain.com", ["http://domain.com/sitemap.xml"]),
    f"{ROBOTS}/extension-robots.txt": ("http://domain.com", ["http://domain.com/sitemap.xml"]),
    f"{ROBOTS}/robots-with-utf8-bom.txt": ("http://www.newsweek.com", NEWSWEEK),
    f"{ROBOTS}/robots-with-utf16le-bom.txt": ("http://www.newsweek.com", NEWSWEEK),
    f"{ROBOTS}/robots-with-utf16be-bom.txt": ("http://www.newsweek.com", NEWSWEEK),
    f"{ROBOTS}/www.flot.com-robots.txt": (
        "http://www.flot.com",
        ["http://flot.com/sitemap_index.xml"],
    ),
    f"{ROBOTS}/wildcards.txt": (
        "http://www.amazon.com",
        [
            "http://www.amazon.com/sitemap-manual-index.xml",
            "http://www.amazon.com/sitemap_vendor_videos_us.xml",
            "http://www.amazon.com/sitemap_vod_index.xml",
        ]
        + [
            f"http://www.amazon.com/sitemaps.{h}.SitemapIndex_0.xml.gz"
            for h in (
                "f3053414d236e84",
                "1946f6b8171de60",
                "bbb7d657c7e29fa",
                "11aafed315ee654",
                "c21f969b5f03d33",
            )
        ],
    ),
    f"{SITES}/DirectoryLister+directorylister.com-old/public/robots.txt": (
        "http://www.directorylister.com",
        [
            "http://www.directorylister.com/sitemap.txt"
        ],  # the plain-text variant, as the MANIFEST says
    ),
    f"{PEERS}/advertools/docs/_static/sitemap_testing/robots.txt": (
        "https://advertools.readthedocs.io",
        [
            f"{ADVERTOOLS_RTD}/{name}"
            for name in (
                "image_sitemap.xml",
                "zipped_sitemap.xml.gz",
                "video_sitemap.xml",
                "regular_sitemap.xml",
                "news_sitemap.xml",
                "sitemap_index.xml",  # the last line, no newline after it
            )
        ],
    ),
    f"{PEERS}/advertools/tests/data/sitemap_testing/robots.txt": (
        "https://advertools.readthedocs.io",
        ["https://advertools.readthedocs.io/sitemap.xml"],
    ),
    f"{SCRAPY}/test_utils_sitemap__test_sitemap_urls_from_robots__1.txt": (
        "http://example.com",
        [*SCRAPY_ROBOTS, "http://example.com/sitemap-relative-url.xml"],
    ),
    f"{SCRAPY}/test_utils_sitemap__test_sitemap_urls_from_robots_str_compat__1.txt": (
        "http://example.com",
        [*SCRAPY_ROBOTS, "http://example.com/sitemap-relative-url.xml"],
    ),
    # scrapy's spider reads robots.txt at www.example.com: the relative one resolves there
    f"{SCRAPY}/test_spider_sitemap__test_get_sitemap_urls_from_robotstxt__1.xml": (
        "http://www.example.com",
        [*SCRAPY_ROBOTS, "http://www.example.com/sitemap-relative-url.xml"],
    ),
    # scrapy skips a URL with an invalid UTF-8 byte; the corpus copy already holds U+FFFD
    # instead of that byte, so nothing is invalid here and both are kept
    f"{SCRAPY}/{SCRAPY_INVALID_UTF8}": (
        "http://example.com",
        ["http://example.com/\ufffd.xml", "http://example.com/ok.xml"],
    ),
}


@pytest.mark.parametrize("rel", ROBOTS_FILES or ABSENT)
def test_sitemaps_from_robots(corpus, rel):
    """Never raises; absolute http(s) URLs, each once; exactly the expected ones."""
    site, want = ROBOTS_EXPECTED.get(rel, ("https://www.example.com", []))
    found = sitemaps_from_robots(_robots_text((corpus / rel).read_bytes()), site)
    assert len(found) == len(set(found))
    assert all(urlsplit(u).scheme in ("http", "https") and urlsplit(u).netloc for u in found)
    assert found == want


def test_robots_expectations_name_corpus_files(corpus):
    assert set(ROBOTS_EXPECTED) <= set(ROBOTS_FILES)


@pytest.mark.parametrize("bom", ["utf8", "utf16le", "utf16be"])
def test_walker_reads_bom_encoded_robots_txt(corpus, serve, bom):
    """The walker's own decoding: the declared (cross-host) sitemap is tried, and the network
    guard refuses it, which shows as one http-error for exactly that URL."""
    raw = (corpus / ROBOTS / f"robots-with-{bom}-bom.txt").read_bytes()
    server = serve(routes={"/robots.txt": lambda h: send(h, 200, raw, "text/plain")})
    w, entries = _walk(server.origin)
    assert entries == []
    assert [(f.url, f.via_robots) for f in w.files] == [(NEWSWEEK[0], True)]
    assert [(p.sitemap, p.code) for p in w.problems] == [(NEWSWEEK[0], "http-error")]
    assert server.paths() == ["/robots.txt"]
