"""A saved run reads back equal, and the queries over runs and sites."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from auditor.errors import HistoryError
from auditor.history import DEFAULT_RECHECK_DAYS, DUE_TOLERANCE, History
from auditor.history.records import due_tolerance
from auditor.models import SitemapFile
from auditor.scorer.result import PageObservation
from tests.history.helpers import BIG_SIMHASH, STARTED, entries, files, pages, result, save

SITE = "https://example.com"
_KEY = {"runs": "id", "sitemap_files": "run_id", "segments": "run_id", "url_state": "run_id"}


@pytest.fixture
def history(db_url):
    with History.open(db_url) as opened:
        yield opened


def test_a_run_reads_back_equal(history):
    run_id = save(history)
    assert history.pages(run_id) == pages()
    assert [SitemapFile(**f) for f in history.sitemap_files(run_id)] == files()
    assert history.segment_verdicts(run_id) == {
        f"{SITE}/news.xml": "untrusted",
        f"{SITE}/blog.xml": "inconclusive",
    }
    expected = replace(result(), run_id=run_id).to_dict()
    assert history.result(run_id) == expected


def test_the_stored_result_carries_the_new_run_id_not_the_callers(history):
    first, second = save(history, run_id=None), save(history, run_id=1)
    assert (first, second) == (1, 2)
    assert history.result(second)["run_id"] == 2


def test_datetimes_come_back_aware_utc_and_the_simhash_unsigned(history):
    page = history.pages(save(history))[0]
    assert page.fp_simhash == BIG_SIMHASH > 2**63
    for value in (page.fetched_at, page.lastmod, page.date_modified, page.http_last_modified):
        assert value.tzinfo is UTC
    assert page.lastmod.microsecond == 123_456
    stored = history._db.rows("SELECT fp_simhash FROM pages ORDER BY position LIMIT 1")[0][0]
    assert stored == BIG_SIMHASH - 2**64  # signed 64-bit in SQLite and PostgreSQL


def test_latest_entries_keep_nat_precision_and_microseconds(history):
    save(history)
    back = history.latest_entries(SITE)
    expected = entries()[["loc", "lastmod", "lastmod_precision", "sitemap"]]
    pd.testing.assert_frame_equal(back[list(expected.columns)], expected)
    raws = ["2026-11-29T19:58:01.123456Z", "2026-11-01", None, "2026-10-05T09:30+01:00"]
    assert back["lastmod_raw"].tolist() == [*raws, "15/10/2026"]  # as written, for reuse
    assert str(back["lastmod"].dtype) == "datetime64[us, UTC]"
    assert back["lastmod"].isna().tolist() == [False, False, True, False, True]
    assert back["lastmod_precision"].tolist()[:2] == ["fraction", "day"]


def test_a_finished_at_is_filled_when_the_result_has_none(history):
    before = datetime.now(UTC)
    bare = replace(result(), finished_at=None)
    run_id = history.save_run(bare, files=[], entries=entries(), pages=[])
    finished = history.runs()[0].finished_at
    assert finished >= before
    assert history.result(run_id)["finished_at"] == finished.isoformat()


def test_naive_datetimes_are_refused_and_nothing_is_saved(history):
    naive = replace(result(), started_at=datetime(2026, 11, 29, 20, 0))
    with pytest.raises(ValueError, match="aware"):
        history.save_run(naive, files=[], entries=entries(), pages=[])
    assert history.runs() == [] and history.sites() == []


def test_a_failure_mid_save_rolls_the_whole_run_back(history):
    save(history)
    unbindable = [*pages(), replace(pages()[0], etag=object())]
    with pytest.raises(HistoryError):  # the run row and its files were already written
        history.save_run(
            result("https://new.example"), files=files(), entries=entries(), pages=unbindable
        )
    assert [s.origin for s in history.sites()] == [SITE]
    for table, key in _KEY.items():
        sql = f"SELECT count(DISTINCT {key}) FROM {table}"
        assert history._db.rows(sql)[0][0] == 1, table
    assert save(history) == 2


def test_values_that_json_cannot_hold_are_refused_before_writing(history):
    odd = [replace(pages()[0], extra={"bad": object()})]
    with pytest.raises(TypeError, match="cannot store object"):
        history.save_run(result(), files=[], entries=entries(), pages=odd)
    assert history.runs() == []


def test_a_file_listed_twice_is_kept_twice(history):
    run_id = history.save_run(result(), files=[files()[0]] * 2, entries=entries(), pages=[])
    assert len(history.sitemap_files(run_id)) == 2


def test_origins_are_kept_exactly_so_ports_make_two_sites(history):
    save(history, "http://127.0.0.1:8001")
    save(history, "http://127.0.0.1:8002")
    save(history, "http://127.0.0.1:8001", started=STARTED + timedelta(days=1))
    assert [(s.origin, s.runs) for s in history.sites()] == [
        ("http://127.0.0.1:8001", 2),
        ("http://127.0.0.1:8002", 1),
    ]
    assert [r.run_id for r in history.runs("http://127.0.0.1:8001")] == [1, 3]
    assert history.latest_entries("http://127.0.0.1:8002")["loc"][0].startswith(
        "http://127.0.0.1:8002/"
    )
    assert history.latest_entries("http://127.0.0.1:9999") is None
    assert history.latest_run("http://127.0.0.1:9999") is None
    assert history.latest_pages("http://127.0.0.1:9999") == []
    assert history.result(42) is None


def test_audited_sites_are_those_with_a_run_in_code_point_order(history):
    for origin in ("https://b.example", "https://Z.example", "https://a.example"):
        save(history, origin)
    everyone = ["https://Z.example", "https://a.example", "https://b.example"]
    assert history.audited() == everyone == [s.origin for s in history.sites()]
    asked = ["https://b.example", "https://never.example", "https://b.example", everyone[0]]
    assert history.audited(asked) == ["https://Z.example", "https://b.example"]
    assert history.audited([]) == []


def test_runs_are_oldest_first_and_latest_is_the_one_started_last(history):
    late, early = STARTED + timedelta(hours=2), STARTED
    save(history, started=late, verdict="trusted")  # saved first, started last
    save(history, started=early, verdict="untrusted")
    assert [r.run_id for r in history.runs(SITE)] == [2, 1]
    assert history.latest_run(SITE).run_id == 1
    assert history.latest_pages(SITE) == history.pages(1)
    site = history.sites()[0]
    assert (site.last_run_id, site.last_verdict, site.runs) == (1, "trusted", 2)


def test_url_state_follows_the_run_started_last(history):
    later = entries().head(2)
    history.save_run(
        result(started=STARTED + timedelta(hours=1)), files=[], entries=later, pages=[]
    )
    save(history)  # started earlier, saved after: must not replace the newer inventory
    assert len(history.latest_entries(SITE)) == 2
    latest = result(started=STARTED + timedelta(hours=2))
    history.save_run(latest, files=[], entries=entries()[:0], pages=[])
    assert len(history.latest_entries(SITE)) == 0
    assert history._db.rows("SELECT count(*) FROM url_state")[0][0] == 1


def test_due_sites_use_recheck_days_or_the_default(history):
    save(history, "https://a.example", recheck_days=1.0)
    save(history, "https://b.example", recheck_days=None)
    a, b = history.sites()
    assert a.due_at == STARTED + timedelta(days=1)  # from the run's start, not its end
    assert (b.recheck_days, b.due_at) == (None, STARTED + timedelta(days=DEFAULT_RECHECK_DAYS))
    assert history.due_sites(result().finished_at) == []
    assert history.due_sites(STARTED + timedelta(days=1)) == [a]
    assert history.due_sites(STARTED + timedelta(days=7)) == [a, b]
    with pytest.raises(ValueError, match="aware"):
        history.due_sites(datetime(2030, 1, 1))


@pytest.mark.parametrize(
    ("days", "tolerance"),
    [(1.0, timedelta(hours=6)), (None, DUE_TOLERANCE), (2.0, DUE_TOLERANCE), (0.0, timedelta())],
)
def test_a_site_is_due_a_tolerance_before_its_due_at(history, days, tolerance):
    save(history, recheck_days=days)
    (site,) = history.sites()
    assert (
        site.tolerance == tolerance == due_tolerance(DEFAULT_RECHECK_DAYS if days is None else days)
    )
    assert history.due_sites(site.due_at - tolerance) == [site]
    assert history.due_sites(site.due_at - tolerance - timedelta(microseconds=1)) == []
    assert site.is_due(site.due_at)


def test_tables_are_flat_frames_for_exports(history):
    save(history, "https://a.example")
    save(history, "https://b.example")
    sites, runs = history.table("sites"), history.table("runs")
    assert sites["origin"].tolist() == ["https://a.example", "https://b.example"]
    assert str(runs["started_at"].dtype) == "datetime64[us, UTC]"
    assert runs["site"].tolist() == ["https://a.example", "https://b.example"]
    segments = history.table("segments")
    assert segments.shape[0] == 4 and "reasons" in segments
    frame = history.table("pages")
    assert frame.shape[0] == 6
    assert frame["fp_simhash"].iloc[0] == BIG_SIMHASH
    assert str(frame["fp_simhash"].dtype) == "UInt64"
    assert frame["truncated"].tolist() == [False, True, False] * 2
    with pytest.raises(ValueError, match="choose from"):
        history.table("url_state")


def test_tables_of_an_empty_history_have_their_columns(history):
    assert list(history.table("runs").columns)[:3] == ["run_id", "site", "started_at"]
    assert history.table("pages").empty and "fp_simhash" in history.table("pages")
    assert history.table("sites").empty and "due_at" in history.table("sites")


def test_the_schema_holds_every_field_of_the_values_it_stores(history):
    def columns(table):
        return set(history._db.columns(table))

    assert {f.name for f in fields(SitemapFile)} <= columns("sitemap_files")
    assert {f.name for f in fields(PageObservation)} <= columns("pages")


def test_a_closed_history_raises_history_error(db_url):
    history = History.open(db_url)
    history.close()
    history.close()
    with pytest.raises(HistoryError):
        history.runs()


def test_only_the_latest_runs_keep_their_pages_blocks(history):
    runs = [save(history, started=STARTED + timedelta(days=d)) for d in range(3)]
    kept = {run: history.pages(run)[0].fp_blocks for run in runs}
    assert kept[runs[0]] is None  # the oldest: its blocks dropped, how it compared kept
    assert kept[runs[1]] == kept[runs[2]] == pages()[0].fp_blocks
    assert history.pages(runs[0])[0].change_summary == pages()[0].change_summary
    other = save(history, "https://other.example")  # another site's runs are its own
    assert history.pages(other)[0].fp_blocks is not None
    assert history.pages(runs[1])[0].fp_blocks is not None


def test_a_nul_from_a_hostile_page_does_not_stop_the_save(history):
    hostile = replace(pages()[0], etag='"a\x00b"', error="bad\x00header")
    run_id = history.save_run(result(), files=files(), entries=entries(), pages=[hostile])
    (back,) = history.pages(run_id)
    kept = "\x00" if history.dialect == "sqlite" else "\ufffd"  # PostgreSQL text has no NUL
    assert (back.etag, back.error) == (f'"a{kept}b"', f"bad{kept}header")
    assert back == replace(hostile, etag=back.etag, error=back.error)
