"""One site in ``auditor serve``: its timeline, its latest run's segments with since when
each holds its verdict, today's plan by reason (the same lines as ``auditor plan
--no-walk``, made on a read-only handle), and the crawl batches its latest run weighed.
A history made by the real pipeline: a demo site on loopback audited twice, a crawl log
recorded between."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.planner import plan
from auditor.planner.lines import json_lines
from auditor.report.site import site_slug
from auditor.sampler import SampleOptions
from auditor.serve import site as site_module
from auditor.serve.fleet import FleetTable
from auditor.serve.readers import Readers
from auditor.serve.site import site_detail, site_plan_lines
from tests.history.backends import snapshot

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(history path, site origin): two audits, a crawl log recorded between them."""
    folder = tmp_path_factory.mktemp("serve-site")
    sections = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
    site = SimulatedSite("mixed", sections, pages_per_section=20, seed=5)
    options = AuditOptions(sample=SampleOptions(sample=20, delay=0.0, sequential=False), seed=5)
    database = str(folder / "history.sqlite3")
    with SiteServer(site) as server:
        with History.open(database) as history:
            audit_site(server.origin, history, options)
        for number in (1, 2):  # twice: the second fetches compare with the first
            log = folder / f"crawl-{number}.jsonl"
            log.write_text(_log(server.origin, site), encoding="utf-8")
            assert main(["crawled", "--from", str(log), "--db", database, "-q"]) == 0
            site.tick()
        with History.open(database) as history:
            audit_site(server.origin, history, options)
        origin = server.origin
    return database, origin


def _log(origin: str, site: SimulatedSite) -> str:
    """A crawl of every page of ``site`` now, as JSON lines (hashed by version)."""
    rows = [
        {"url": origin + path, "fetched_at": datetime.now(UTC).isoformat(), "status": 200,
         "hash": f"v{site.pages[path].version}"}
        for path in sorted(site.pages)
    ]  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.fixture
def served(audited):  # type: ignore[no-untyped-def]
    database, origin = audited
    readers = Readers(database)
    yield readers, FleetTable(readers, check_seconds=0.0, background=False), origin
    readers.close()


def test_the_detail_of_a_site_as_the_history_holds_it(served, audited):
    readers, table, origin = served
    detail = site_detail(readers, table, site_slug(origin))
    assert detail is not None and detail.row.site == origin
    with History.open(audited[0]) as history:
        runs = history.runs(origin)
        latest = history.latest_run(origin)
        stored = history.result(latest.run_id)
        batches = history.crawl_batches()
    assert detail.timeline == tuple(runs) and len(runs) == 2
    assert detail.latest_result == stored
    assert [(s["sitemap"], s["verdict"]) for s in detail.segments] == [
        (s["sitemap"], s["verdict"]) for s in stored["segments"]
    ]
    for segment, kept in zip(detail.segments, stored["segments"], strict=True):
        assert segment["urls"] == kept["urls"] and segment["compared"] == kept["compared"]
        assert segment["reasons"] == [f"{r['code']}: {r['detail']}" for r in kept["reason_details"]]
        assert isinstance(segment["since"], datetime) and segment["since"] <= latest.started_at
        assert segment["group_pattern"] == (kept.get("group") or {}).get("pattern")
    assert stored["crawl_batches"], "the second audit weighed the recorded crawl"
    assert [b.id for b in detail.crawl_batches] == stored["crawl_batches"]
    assert detail.crawl_batches == tuple(b for b in batches if b.id in stored["crawl_batches"])
    assert site_detail(readers, table, "nowhere.example") is None


def test_the_plan_is_the_one_auditor_plan_no_walk_makes_and_nothing_is_written(served, audited):
    readers, table, origin = served
    before = snapshot(audited[0])["history.sqlite3"]
    lines = list(site_plan_lines(readers, origin, now=NOW))
    detail = site_detail(readers, table, site_slug(origin), now=NOW)
    assert snapshot(audited[0])["history.sqlite3"] == before
    with History.open(audited[0]) as history:
        expected = list(json_lines(plan(history, [origin], now=NOW, walk=False)))
    assert lines == expected and len(lines) > 0
    counts = Counter(json.loads(line)["reason"] for line in lines)
    assert detail is not None and detail.plan_counts == dict(counts)


def test_the_plan_counts_are_kept_until_the_site_s_next_run(audited, tmp_path, monkeypatch):
    database = str(tmp_path / "copy.sqlite3")
    shutil.copyfile(audited[0], database)  # this test saves a run: a copy of its own
    origin = audited[1]
    readers = Readers(database)
    table = FleetTable(readers, check_seconds=0.0, background=False)
    made = []
    real = site_module._plan_counts

    def counted(*args):  # type: ignore[no-untyped-def]
        made.append(args)
        return real(*args)

    monkeypatch.setattr(site_module, "_plan_counts", counted)
    slug = site_slug(origin)
    first = site_detail(readers, table, slug)
    second = site_detail(readers, table, slug)
    assert first is not None and second is not None
    assert first.plan_counts == second.plan_counts and len(made) == 1
    _save_again(database, origin)  # another run of the site: planned again
    third = site_detail(readers, table, slug)
    assert third is not None and len(made) == 2 and third.row.runs == 3
    readers.close()


def _save_again(database: str, origin: str) -> None:
    """One more run of ``origin`` (its latest result again, a day later, no pages)."""
    from dataclasses import replace

    from tests.history.helpers import entries, result

    with History.open(database) as history:
        latest = history.latest_run(origin)
        assert latest is not None
        run = replace(result(origin, started=latest.started_at + timedelta(days=1)), report=None)
        history.save_run(run, files=[], entries=entries(origin)[:0], pages=[])


def test_a_site_with_a_single_run_and_no_crawl(db_url):
    from dataclasses import replace

    from tests.history.helpers import entries, files, pages, result

    database = db_url
    origin = "https://one.example"
    with History.open(database) as history:
        history.save_run(replace(result(origin), report=None), files=files(origin),
                         entries=entries(origin), pages=pages(origin))  # fmt: skip
    readers = Readers(database)
    try:
        table = FleetTable(readers, background=False)
        detail = site_detail(readers, table, "one.example", now=NOW)
        assert detail is not None
        assert detail.crawl_batches == () and len(detail.timeline) == 1
        assert [s["verdict"] for s in detail.segments] == ["untrusted", "inconclusive"]
        assert detail.segments[0]["since"] == detail.row.since
        assert sum(detail.plan_counts.values()) == len(
            list(site_plan_lines(readers, origin, now=NOW))
        )
    finally:
        readers.close()
