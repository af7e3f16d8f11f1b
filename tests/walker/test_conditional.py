"""Conditional GETs of sitemap files: a walk given what the previous walk read.

Every file the previous walk read whole is asked for with its validators; a 304 stands
in for reading it (its records go through the walk as if just read), a 200 is read as
usual. The server's own log shows what was asked and what was sent.
"""

from __future__ import annotations

import pytest

from auditor.history import decode_state, encode_state
from auditor.history.state import STATE_COLUMNS
from auditor.http import HttpClient, HttpOptions
from auditor.models import SitemapFile
from auditor.walker import Walk, WalkOptions
from auditor.walker.inventory import entries_to_dataframe
from auditor.walker.reuse import PreviousRun
from tests.conditional import (
    SITEMAP_PATHS,
    Answer,
    ConditionalServer,
    make_site,
    post_entries,
    touch_later,
)
from tests.loopback import LoopbackServer, send

OPTIONS = WalkOptions(http=HttpOptions(timeout=5, retries=0))


def _walk(server: LoopbackServer, previous: PreviousRun | None = None, options=OPTIONS) -> Walk:
    walk = Walk(server.origin, options, client=HttpClient(options.http), previous=previous)
    walk.entries = list(walk)  # type: ignore[attr-defined]
    return walk


def _walk_twice(server: ConditionalServer) -> tuple[Walk, Walk, dict[str, list[Answer]]]:
    """Walk ``server``, then again with the first walk as the previous run; both walks
    and the sitemap answers of the second."""
    first = _walk(server)
    mark = len(server.answers)
    second = _walk(server, _previous(first))
    return first, second, server.sitemap_answers(mark)


def _previous(walk: Walk, *, columns: tuple[str, ...] | None = None) -> PreviousRun:
    """What the history would hand the next walk: the files, the inventory via url_state."""
    frame = entries_to_dataframe(walk.entries)  # type: ignore[attr-defined]
    if columns is not None:
        frame = frame[list(columns)]
    return PreviousRun(walk.files, decode_state(encode_state(frame)))


def _by_url(files: list[SitemapFile]) -> dict[str, SitemapFile]:
    return {f.url.rsplit("/", 1)[1]: f for f in files}


@pytest.fixture
def site(tmp_path):
    return make_site(tmp_path / "site")


def test_an_unchanged_site_is_walked_again_from_304s(site):
    with ConditionalServer(root=site) as server:
        first, second, answers = _walk_twice(server)
        third = _walk(server, _previous(second))  # a reused file is reused again

    assert set(answers) == set(SITEMAP_PATHS) | {"/gone.xml"}
    for path in SITEMAP_PATHS:
        (answer,) = answers[path]
        assert answer.status == 304 and answer.body_bytes == 0, path
        assert answer.if_none_match and answer.if_modified_since, path
    assert answers["/gone.xml"][0].if_none_match is None  # a 404 has nothing to compare

    for later in (second, third):
        assert later.entries == first.entries  # type: ignore[attr-defined]
        assert later.problems == first.problems
        files, before = _by_url(later.files), _by_url(first.files)
        assert [f.url for f in later.files] == [f.url for f in first.files]
        for name in ("sitemap_index.xml", "pages.xml", "posts.xml.gz", "news.xml"):
            file = files[name]
            assert file.reused and file.status == 304 and file.bytes_read == 0, name
            assert (file.kind, file.records, file.urls) == (
                before[name].kind,
                before[name].records,
                before[name].urls,
            )
            assert file.etag == before[name].etag and file.content == before[name].content
        assert files["posts.xml.gz"].gzipped
        assert not files["gone.xml"].reused and files["gone.xml"].status == 404
    news = [e for e in first.entries if e.news_publication_date]  # type: ignore[attr-defined]
    assert len(news) == 1 and news[0].news_publication_date.microsecond == 250_000


def test_a_changed_child_alone_is_read_again(site):
    with ConditionalServer(root=site) as server:
        first = _walk(server)
        (site / "posts.xml").write_text(post_entries(9), encoding="utf-8")  # one post more
        touch_later(site / "posts.xml")
        mark = len(server.answers)
        second = _walk(server, _previous(first))
        answers = server.sitemap_answers(mark)

    statuses = {path: [a.status for a in found] for path, found in answers.items()}
    assert statuses == {
        "/sitemap_index.xml": [304],
        "/pages.xml": [304],
        "/posts.xml.gz": [200],
        "/gone.xml": [404],
        "/news.xml": [304],
    }
    locs = {e.loc for e in second.entries}  # type: ignore[attr-defined]
    assert locs == {e.loc for e in first.entries} | {server.url("/posts/8.html")}  # type: ignore[attr-defined]
    files = _by_url(second.files)
    assert not files["posts.xml.gz"].reused and files["posts.xml.gz"].urls == 9
    assert files["pages.xml"].reused and second.problems == first.problems


def test_a_server_that_ignores_validators_is_read_as_today(site):
    with ConditionalServer(root=site, mode="ignore") as server:
        first, second, answers = _walk_twice(server)

    assert all(a.if_none_match for p in SITEMAP_PATHS for a in answers[p])  # asked...
    assert {a.status for p in SITEMAP_PATHS for a in answers[p]} == {200}  # ...and ignored
    assert second.entries == first.entries  # type: ignore[attr-defined]
    assert second.problems == first.problems
    assert not any(f.reused for f in second.files)


def test_last_modified_alone_is_enough(site):
    with ConditionalServer(root=site, mode="last-modified") as server:
        first, second, answers = _walk_twice(server)

    for path in SITEMAP_PATHS:
        (answer,) = answers[path]
        assert answer.status == 304 and answer.if_none_match is None, path
        assert answer.if_modified_since == _by_url(first.files)[path[1:]].last_modified_header
    assert second.entries == first.entries  # type: ignore[attr-defined]


def test_a_file_whose_urls_went_to_another_file_is_asked_without_validators(site):
    (site / "news.xml").write_text(  # news.xml, read last, lists a page pages.xml lists
        (site / "news.xml").read_text().replace("/posts/breaking.html", "/about.html"),
        encoding="utf-8",
    )
    with ConditionalServer(root=site) as server:
        first, second, answers = _walk_twice(server)

    assert _by_url(first.files)["news.xml"].content.duplicates == 1
    assert answers["/news.xml"][0].if_none_match is None  # the history lacks one of its URLs
    assert answers["/news.xml"][0].status == 200 and answers["/pages.xml"][0].status == 304
    assert second.entries == first.entries  # type: ignore[attr-defined]
    assert second.problems == first.problems


def test_an_older_history_without_the_lastmods_as_written_asks_without_validators(site):
    with ConditionalServer(root=site) as server:
        first = _walk(server)
        mark = len(server.answers)
        second = _walk(server, _previous(first, columns=STATE_COLUMNS))
        answers = server.sitemap_answers(mark)

    urlsets = ("/pages.xml", "/posts.xml.gz", "/news.xml")
    assert all(answers[p][0].if_none_match is None and answers[p][0].status == 200 for p in urlsets)
    assert answers["/sitemap_index.xml"][0].status == 304  # its children are in its record
    assert second.entries == first.entries  # type: ignore[attr-defined]


def test_caps_and_max_files_hold_for_reused_files(site):
    capped = WalkOptions(http=HttpOptions(timeout=5, retries=0, max_bytes=400), max_files=3)
    with ConditionalServer(root=site) as server:
        first = _walk(server, options=capped)
        mark = len(server.answers)
        second = _walk(server, _previous(first), options=capped)
        answers = server.sitemap_answers(mark)

    codes = {p.code for p in first.problems}
    assert {"too-large", "max-files"} <= codes
    assert second.problems == first.problems
    assert second.entries == first.entries  # type: ignore[attr-defined]
    assert len(second.files) == len(first.files) == 3
    assert all(found[0].status == 304 for found in answers.values())


def test_a_304_to_an_unconditional_request_is_a_problem():
    def not_modified(handler):
        send(handler, 304)

    routes = {"/sitemap.xml": not_modified}
    with LoopbackServer(routes=routes) as server:
        walk = _walk(server)

    (problem,) = [p for p in walk.problems if p.sitemap == server.url("/sitemap.xml")]
    assert problem.code == "http-error"
    assert "304" in problem.detail and "asked for no comparison" in problem.detail
    (file,) = walk.files
    assert file.status == 304 and not file.readable and not file.reused
