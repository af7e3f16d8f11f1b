"""auditor coverage against a loopback site built to have each finding: from a WARC
crawl log, from a JSON Lines one (statuses only: the sample tells the rest), and from
the history's crawl record (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from auditor.cli import main
from tests.coverage.site import CRAWLED, NEVER, CoverageSite, warc


def _audit(db: str, origin: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["audit", origin, "--db", db, "--delay", "0", "--full-sample", "--json"]
    main(args)
    capsys.readouterr()


def _coverage(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["coverage", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _examples(result: dict[str, Any], sitemap: str, code: str) -> dict[str, str | None]:
    (row,) = [s for s in result["sitemaps"] if s["sitemap"].endswith(sitemap)]
    return {e["url"].rsplit("/", 1)[1]: e["detail"] for e in row["examples"].get(code, [])}


@pytest.fixture
def site_db(tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    with CoverageSite() as site:
        _audit(db_url, site.origin, capsys)
        yield site, db_url


def _every_finding(result: dict[str, Any], origin: str, source: str) -> None:
    totals = result["totals"]
    assert result["inventory"]["urls"] == 14  # /shared once
    assert totals["not-crawled"] == len(NEVER)
    assert set(_examples(result, "a.xml", "not-crawled")) == {"never-1", "never-2"}
    assert totals["orphan"] == 1
    assert [e["url"] for e in result["orphans"]["examples"]] == [origin + "/orphan"]
    several = result["in_several_sitemaps"]
    assert several["urls"] == 1 and several["exact"]
    (pair,) = several["pairs"]
    assert (pair["first"], pair["also"]) == (origin + "/a.xml", origin + "/b.xml")
    assert pair["examples"] == [origin + "/shared"]
    assert _examples(result, "a.xml", "redirect") == {"moved": origin + "/fine-1"}
    assert _examples(result, "a.xml", "client-error") == {"gone": "HTTP 404"}
    assert _examples(result, "a.xml", "server-error") == {"broken": "HTTP 500"}
    assert _examples(result, "a.xml", "noindex") == {
        "meta-noindex": "meta",
        "header-noindex": "header",
    }
    assert _examples(result, "a.xml", "canonical-elsewhere") == {
        "canonical-elsewhere": origin + "/fine-2"
    }
    for code in ("redirect", "client-error", "server-error", "canonical-elsewhere"):
        assert totals[code] == 1, code
    assert totals["noindex"] == 2
    (a,) = [s for s in result["sitemaps"] if s["sitemap"].endswith("a.xml")]
    assert a["urls"] == 13 and a["crawled"] == 11
    assert {e["source"] for e in a["examples"]["client-error"]} == {source}


def test_a_warc_crawl_log_shows_every_finding(site_db, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    site, db = site_db
    path = tmp_path / "crawl.warc.gz"
    warc(path, site.origin, CRAWLED, datetime.now(UTC) + timedelta(minutes=1))
    result = _coverage(capsys, site.origin, "--db", db, "--from", str(path))
    assert result["crawled_from"] == str(path)
    _every_finding(result, site.origin, "crawl")


def test_the_history_crawl_record_shows_every_finding(site_db, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    site, db = site_db
    path = tmp_path / "crawl.warc.gz"
    warc(path, site.origin, CRAWLED, datetime.now(UTC) + timedelta(minutes=1))
    assert main(["crawled", "--from", str(path), "--db", db, "--json"]) == 0
    capsys.readouterr()
    result = _coverage(capsys, site.origin, "--db", db)
    assert result["crawled_from"] == "history"
    _every_finding(result, site.origin, "crawl")


def test_a_status_only_log_leaves_noindex_and_canonical_to_the_sample(
    site_db, tmp_path, capsys
) -> None:  # type: ignore[no-untyped-def]
    site, db = site_db
    before = datetime.now(UTC) - timedelta(days=1)  # older than the sample: the sample decides
    statuses = {"/moved": 301, "/gone": 404, "/broken": 500}
    lines = [
        json.dumps(
            {
                "url": site.origin + p,
                "fetched_at": before.isoformat(),
                "status": statuses.get(p, 200),
            }
        )
        for p in CRAWLED
    ]
    lines.append("not json")
    lines.append(
        json.dumps(
            {"url": "https://elsewhere.example/x", "fetched_at": before.isoformat(), "status": 200}
        )
    )
    path = tmp_path / "crawl.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _coverage(capsys, site.origin, "--db", db, "--from", str(path))
    assert result["crawl"]["other_sites"] == 1
    assert result["crawl"]["sample_pages"] >= 13
    _every_finding(result, site.origin, "sample")


def test_the_text_summary_is_short_and_a_site_not_audited_is_a_usage_error(site_db, capsys) -> None:  # type: ignore[no-untyped-def]
    site, db = site_db
    assert main(["coverage", site.origin, "--db", db]) == 0
    out = capsys.readouterr().out
    assert "14 URLs listed in 2 sub-sitemaps" in out
    assert "1 listed in more than one sub-sitemap" in out
    assert "1 redirect, 1 answer 4xx, 1 answer 5xx, 2 say noindex" in out
    assert len(out.splitlines()) <= 10
    assert main(["coverage", "http://127.0.0.1:9", "--db", db]) == 2


def test_the_report_and_the_exports_carry_the_coverage(site_db, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import pandas as pd

    site, db = site_db
    path = tmp_path / "crawl.warc.gz"
    warc(path, site.origin, CRAWLED, datetime.now(UTC) + timedelta(minutes=1))
    assert main(["crawled", "--from", str(path), "--db", db]) == 0
    out = tmp_path / "reports"
    assert main(["report", site.origin, "--db", db, "--out", str(out)]) == 0
    (page,) = out.glob("*/index.html")
    html = page.read_text(encoding="utf-8")
    assert '<section id="coverage">' in html
    assert f"{site.origin}/header-noindex" in html and "also in /b.xml" in html
    assert main(["export", "--format", "csv", "--db", db, "--out", str(tmp_path / "x")]) == 0
    counts = pd.read_csv(tmp_path / "x" / "coverage.csv")
    a = counts[counts["sitemap"] == site.origin + "/a.xml"].iloc[0]
    assert (a["urls"], a["crawled"], a["not_crawled"], a["noindex"], a["redirect"]) == (
        13,
        11,
        2,
        2,
        1,
    )
    findings = pd.read_csv(tmp_path / "x" / "coverage_findings.csv")
    found = {
        (f, u.rsplit("/", 1)[1]) for f, u in zip(findings["finding"], findings["url"], strict=True)
    }
    assert found == {
        ("redirect", "moved"),
        ("client-error", "gone"),
        ("server-error", "broken"),
        ("noindex", "meta-noindex"),
        ("noindex", "header-noindex"),
        ("canonical-elsewhere", "canonical-elsewhere"),
        ("in-several-sitemaps", "shared"),
        ("orphan", "orphan"),
    }
