"""The trust look-up of ``auditor serve``: a URL's site, sub-sitemap, group, that
segment's verdict and since when, its last seen lastmod, and whether a crawler may
schedule it on lastmod, read from histories made by real audits of loopback sites.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.dispersion.groups import Grouping
from auditor.history import History
from auditor.sampler import SampleOptions
from auditor.scorer.result import SegmentVerdict
from auditor.serve.readers import Readers
from auditor.serve.trust import MAX_URL_CHARS, SITE_WEIGHT, TrustAnswer, TrustIndex
from tests.audit.run import audit_json
from tests.audit.test_mixed_sitemap import build_site
from tests.crawl.blog import Blog
from tests.crawl.test_cli_crawled_groups import _audit, _crawled, _plan, _posts_and_lists
from tests.history.conftest import BACKENDS, WRITER, backend, db_url
from tests.history.helpers import STARTED, entries, result
from tests.loopback import LoopbackServer

__all__ = ["backend", "db_url"]  # the history fixtures: a test on SQLite and PostgreSQL

MIXED = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
OPTIONS = AuditOptions(sample=SampleOptions(sample=40, delay=0.0, sequential=False), seed=3)


def _location(backend: str, folder, request: pytest.FixtureRequest) -> str:  # type: ignore[no-untyped-def]
    if backend == "sqlite":
        return str(folder / "history.sqlite3")
    return str(request.getfixturevalue("postgres_server").new_database(WRITER))


@pytest.fixture(scope="module", params=BACKENDS)
def audited(request: pytest.FixtureRequest, tmp_path_factory):  # type: ignore[no-untyped-def]
    """(history location, the mixed site's origin, the grouped blog's origin): a demo
    site with a trusted blog beside untrusted products, and a Hexo-like blog whose one
    sitemap splits into posts and list pages, each audited twice."""
    folder = tmp_path_factory.mktemp("trust")
    location = _location(request.param, folder, request)
    site = SimulatedSite("mixed", MIXED, pages_per_section=40, seed=3)
    with SiteServer(site) as server, History.open(location) as history:
        audit_site(server.origin, history, OPTIONS)
        site.tick()
        audit_site(server.origin, history, OPTIONS)
        mixed = server.origin
    for build in (0, 1):
        build_site(folder / f"v{build + 1}", build)
    with LoopbackServer(root=folder / "v1") as blog:
        audit_json(blog.origin, location, 60)
        blog.root = folder / "v2"
        audit_json(blog.origin, location, 60)
        grouped = blog.origin
    return location, mixed, grouped


@pytest.fixture
def index(audited):  # type: ignore[no-untyped-def]
    readers = Readers(audited[0])
    yield TrustIndex(readers)
    readers.close()


def _segments(location: str, site: str) -> dict[tuple[str, str | None], tuple[str, object]]:
    """The view's latest segment verdicts of ``site``: (sitemap, group) -> (verdict, since)."""
    with History.open(location) as history:
        rows = history._db.rows(
            "SELECT sitemap, group_pattern, verdict, since FROM latest_segment_verdicts"
            " WHERE site = ?",
            (site,),
        )
    return {(s, g): (v, pd.Timestamp(since).to_pydatetime()) for s, g, v, since in rows}


def _inventory(location: str, site: str) -> pd.DataFrame:
    with History.open(location) as history:
        found = history.latest_entries(site)
    assert found is not None
    return found


def test_a_listed_url_answers_its_sub_sitemap_verdict_since_and_lastmod(audited, index):
    location, mixed, _ = audited
    segments = _segments(location, mixed)
    frame = _inventory(location, mixed)
    trusted = {sitemap for (sitemap, _), (v, _) in segments.items() if v == "trusted"}
    assert any("blog" in s for s in trusted) and not any("products" in s for s in trusted)
    for row in frame.sample(20, random_state=1).itertuples():
        answer = index.look_up(row.loc)
        verdict, since = segments[(row.sitemap, None)]
        assert (answer.site, answer.sitemap, answer.group) == (mixed, row.sitemap, None)
        assert (answer.verdict, answer.since, answer.listed) == (verdict, since, True)
        assert answer.lastmod == row.lastmod.to_pydatetime()
        assert answer.schedule_on_lastmod == (verdict == "trusted")
        assert answer.reason.endswith(": schedule on lastmod") == (verdict == "trusted")


def test_a_url_of_a_split_sitemap_answers_its_group(audited, index):
    location, _, grouped = audited
    segments = _segments(location, grouped)
    with History.open(location) as history:
        run = history.latest_run(grouped)
        assert run is not None
        stored = history.result(run.run_id)
    assert stored is not None
    groupings = stored["dispersion"]["groupings"]
    (sitemap,) = groupings
    grouping = Grouping.from_dict(groupings[sitemap])
    post = f"{grouped}/2026/01/01/post-0.html"
    tag = f"{grouped}/tags/tag-3.html"
    answers = {url: index.look_up(url) for url in (post, tag)}
    for url, answer in answers.items():
        pattern = grouping.label_of(url)
        assert pattern is not None and answer.group == pattern and answer.sitemap == sitemap
        verdict, since = segments[(sitemap, pattern)]
        assert (answer.verdict, answer.since) == (verdict, since)
    assert answers[post].schedule_on_lastmod and answers[post].group.startswith("/YYYY")
    assert not answers[tag].schedule_on_lastmod and "/tags/*" in answers[tag].group


def test_an_unknown_origin_is_an_answer_not_an_error(audited, index):
    _, mixed, _ = audited
    port = int(mixed.rsplit(":", 1)[1])
    for url in ("https://nowhere.example/blog/1", f"http://127.0.0.1:{port + 1}/blog/1",
                mixed.replace("http://", "https://") + "/blog/1"):  # fmt: skip
        answer = index.look_up(url)
        assert answer.site is None and not answer.listed and not answer.schedule_on_lastmod
        assert answer.verdict is None and "not in the history" in answer.reason


def test_an_unlisted_url_of_a_known_site_answers_the_sites_verdict(audited, index):
    location, mixed, _ = audited
    with History.open(location) as history:
        (verdict, since), *_ = history._db.rows(
            "SELECT verdict, since FROM latest_site_verdicts WHERE site = ?", (mixed,)
        )
    answer = index.look_up(f"{mixed}/blog/no-such-page")
    assert (answer.site, answer.listed, answer.sitemap, answer.lastmod) == (
        mixed,
        False,
        None,
        None,
    )
    assert answer.verdict == verdict and answer.since == pd.Timestamp(since).to_pydatetime()
    assert not answer.schedule_on_lastmod and "not listed" in answer.reason


def test_batch_answers_keep_their_order(audited, index):
    _, mixed, grouped = audited
    urls = [f"{mixed}/blog/3", "https://nowhere.example/", f"{grouped}/tags/tag-1.html",
            f"{mixed}/products/2", f"{mixed}/blog/3", f"{mixed}/nope"]  # fmt: skip
    assert index.look_up_many(urls) == [index.look_up(url) for url in urls]
    assert [a.url for a in index.look_up_many(urls)] == urls
    with pytest.raises(ValueError, match=r"urls\[1\]"):
        index.look_up_many([urls[0], "ftp://nowhere.example/x"])


def test_answers_are_the_same_from_sixteen_threads(audited):
    _, mixed, grouped = audited
    urls = [f"{mixed}/{section}/{i}" for section in MIXED for i in range(40)]
    urls += [f"{grouped}/2026/0{1 + i % 5}/{1 + i % 27:02d}/post-{i}.html" for i in range(60)]
    readers = Readers(audited[0])
    try:
        serial = [TrustIndex(readers).look_up(url) for url in urls]
        shared, found, failed = TrustIndex(readers), {}, []

        def work(k: int) -> None:
            try:
                found[k] = [shared.look_up(url) for url in urls[k:] + urls[:k]]
            except Exception as exc:  # reported below
                failed.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        # Readers here cannot close another thread's SQLite handle (serve-data's can)
        with contextlib.suppress(sqlite3.ProgrammingError):
            readers.close()
    assert not failed
    for k, answers in found.items():
        assert answers == serial[k:] + serial[:k]


# -- a history written without the network: spellings, new runs, hostile URLs -------------

SHOP = "https://shop.example"


def _trusted_blog(site: str, started=STARTED):  # type: ignore[no-untyped-def]
    """The helpers' result with its blog sub-sitemap trusted."""
    base = result(site, started=started, verdict="partial")
    blog = SegmentVerdict(f"{site}/blog.xml", 2, "trusted", agree=2, compared=2)
    return replace(base, segments=(base.segments[0], blog))


@pytest.fixture(params=BACKENDS)
def shop(request: pytest.FixtureRequest, tmp_path):  # type: ignore[no-untyped-def]
    location = _location(request.param, tmp_path, request)
    with History.open(location) as history:
        history.save_run(_trusted_blog(SHOP), files=[], entries=entries(SHOP), pages=[])
    return location


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_spellings_of_a_url_find_it(shop):
    readers = Readers(shop)
    try:
        index = TrustIndex(readers)
        for url in (f"{SHOP}/c", "https://SHOP.Example/c", "https://shop.example:443/c",
                    "https://shop.example./c#comments", "  https://shop.example/c\n",
                    "https://shop.example/%63"):  # fmt: skip
            answer = index.look_up(url)
            assert (answer.site, answer.listed, answer.url) == (SHOP, True, url)
            assert answer.sitemap == f"{SHOP}/blog.xml" and answer.schedule_on_lastmod
        query = index.look_up("https://shop.example/%C3%A9?q=1#top")
        assert query.listed and query.lastmod is None and not query.schedule_on_lastmod
        assert query.verdict == "untrusted"
        assert not index.look_up("http://shop.example/c").listed  # another origin
        assert index.look_up("http://shop.example/c").site is None
        assert not index.look_up(f"{SHOP}/C").listed  # a path's case is its own
    finally:
        readers.close()


def test_a_new_run_and_a_later_plan_walk_are_seen_within_the_check(shop):
    readers, clock = Readers(shop), Clock()
    try:
        index = TrustIndex(readers, clock=clock)
        assert index.look_up(f"{SHOP}/c").schedule_on_lastmod
        assert not index.look_up(f"{SHOP}/new").listed
        later = STARTED + timedelta(days=1)
        demoted = replace(result(SHOP, started=later), run_id=None)
        grown = pd.concat([entries(SHOP), entries(SHOP).iloc[[3]].assign(loc=f"{SHOP}/new")])
        with History.open(shop) as history:
            history.save_run(demoted, files=[], entries=grown, pages=[])
        assert index.look_up(f"{SHOP}/c").schedule_on_lastmod  # checked under a second ago
        clock.now += 1.5
        assert not index.look_up(f"{SHOP}/c").schedule_on_lastmod  # the new run's verdict
        assert index.look_up(f"{SHOP}/new").listed
        walk = entries(SHOP).iloc[[0, 3]]
        with History.open(shop) as history:
            history.save_plan_walk(SHOP, later + timedelta(hours=1), [], walk)
        clock.now += 1.5
        assert not index.look_up(f"{SHOP}/new").listed  # the plan's walk no longer lists it
        assert index.look_up(f"{SHOP}/c").listed
    finally:
        readers.close()


def test_a_site_audited_after_the_index_started_is_found(shop):
    readers, clock = Readers(shop), Clock()
    try:
        index = TrustIndex(readers, clock=clock)
        other = "https://other.example"
        assert index.look_up(f"{other}/c").site is None
        with History.open(shop) as history:
            history.save_run(_trusted_blog(other), files=[], entries=entries(other), pages=[])
        clock.now += 1.5
        assert index.look_up(f"{other}/c").listed
    finally:
        readers.close()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://shop.example/c",
        "javascript:alert(1)",
        "shop.example/c",
        "/c",
        "",
        "https://[::1/c",
        "https:///c",
        "https://shop.example:99999/c",
        "https://shop.example/" + "a" * MAX_URL_CHARS,
    ],
)
def test_hostile_urls_raise_value_error(shop, url):
    readers = Readers(shop)
    try:
        with pytest.raises(ValueError):
            TrustIndex(readers).look_up(url)
    finally:
        readers.close()


def test_odd_characters_get_a_plain_answer(shop):
    readers = Readers(shop)
    try:
        index = TrustIndex(readers)
        for url in (f'{SHOP}/<script>alert("x")</script>', f"{SHOP}/\u0000\ud800",
                    f"{SHOP}/a b", f"{SHOP}/" + "é" * 1000):  # fmt: skip
            answer = index.look_up(url)
            assert answer.site == SHOP and not answer.listed
            json.dumps(answer.to_dict())  # JSON-ready
    finally:
        readers.close()


def test_to_dict_is_json_ready_with_utc_instants(shop):
    readers = Readers(shop)
    try:
        answer = TrustIndex(readers).look_up(f"{SHOP}/a")
    finally:
        readers.close()
    data = answer.to_dict()
    assert set(data) == {f.name for f in TrustAnswer.__dataclass_fields__.values()}
    assert data["lastmod"] == "2026-11-29T19:58:01.123456+00:00" and data["listed"] is True
    assert data["since"].endswith("+00:00")
    assert json.loads(json.dumps(data)) == data


def test_the_cache_holds_at_most_its_urls(shop):
    with History.open(shop) as history:
        for n in range(6):
            site = f"https://s{n}.example"
            history.save_run(_trusted_blog(site), files=[], entries=entries(site), pages=[])
    readers = Readers(shop)
    try:
        bound = 2 * (5 + SITE_WEIGHT)  # two sites of five URLs
        index = TrustIndex(readers, max_cached_urls=bound)
        for _ in range(2):
            for n in range(6):
                assert index.look_up(f"https://s{n}.example/c").schedule_on_lastmod
                assert index.cached_urls <= 10
        assert index.cached_urls == 10
    finally:
        readers.close()


# -- the crawler's fetches contradict a trusted group: the planner's rule ---------------


def test_a_trusted_group_the_crawl_contradicts_is_not_scheduled_as_the_plan_says(
    db_url, capsys, tmp_path
):
    blog = Blog()
    blog.build(tmp_path / "v0", 0)
    with LoopbackServer(root=tmp_path / "v0") as server:
        origin = server.origin
        posts, _ = _posts_and_lists(_audit(capsys, db_url, origin, 60))
        assert posts["verdict"] == "trusted"
        readers, clock = Readers(db_url), Clock()
        try:
            index = TrustIndex(readers, clock=clock)
            post = f"{origin}{blog.post_path(1)}"
            assert index.look_up(post).schedule_on_lastmod
            day1 = datetime.now(UTC)
            _crawled(capsys, db_url, tmp_path / "day1.jsonl",
                     blog.crawl_log(tmp_path / "v0", origin, day1))  # fmt: skip
            deploy = day1.replace(microsecond=0) + timedelta(seconds=2)
            blog.build(tmp_path / "v1", 1, deploy.strftime("%Y-%m-%dT%H:%M:%SZ"))
            time.sleep(max((deploy - datetime.now(UTC)).total_seconds(), 0) + 1.1)
            server.root = tmp_path / "v1"
            _plan(capsys, db_url, origin)
            _crawled(capsys, db_url, tmp_path / "day2.jsonl",
                     blog.crawl_log(tmp_path / "v1", origin, datetime.now(UTC)))  # fmt: skip
            planned = _plan(capsys, db_url, origin)
            clock.now += 1.5
            answers = index.look_up_many([f["url"] for f in planned])
        finally:
            readers.close()
    assert {f["verdict"] for f in planned} >= {"untrusted"}
    for fetch, answer in zip(planned, answers, strict=True):
        assert answer.listed and answer.schedule_on_lastmod == (fetch["verdict"] == "trusted")
    contradicted = [a for a in answers if a.group and a.group.startswith("/YYYY")]
    assert contradicted and all(a.verdict == "trusted" for a in contradicted)
    assert all("contradict" in a.reason for a in contradicted)


def test_peek_answers_only_what_needs_no_read(tmp_path):
    """The API answers a kept site's URL on its event loop: ``peek`` must never read."""
    from auditor.serve.readers import Readers
    from auditor.serve.trust import TrustIndex
    from tests.history.helpers import save

    database = tmp_path / "history.sqlite3"
    with History.open(database) as history:
        save(history, "https://example.com")
    clock = [0.0]
    readers = Readers(str(database))
    try:
        index = TrustIndex(readers, clock=lambda: clock[0])
        url = "https://example.com/blog/1"
        assert index.peek(url) is None  # not kept yet
        looked = index.look_up(url)
        assert index.peek(url) == looked  # kept and checked: answered without a read
        assert index.peek("https://nowhere.example/a").site is None
        clock[0] += 5.0  # past the check: a thread must look again
        assert index.peek(url) is None
        with pytest.raises(ValueError):
            index.peek("ftp://example.com/a")
    finally:
        readers.close()
