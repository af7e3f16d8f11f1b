"""auditor crawled --backfill: a WARC's page captures dated against the sitemaps it
captured, weeks of them, so a site's second audit already weighs weeks of changes."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History


def _capture(writer: WARCWriter, session: requests.Session, url: str, at: datetime) -> None:
    answer = session.get(url, timeout=10)
    headers = [(k, v) for k, v in answer.headers.items() if k.lower() != "content-length"]
    writer.write_record(
        writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(answer.content),
            length=len(answer.content),
            http_headers=StatusAndHeaders(f"{answer.status_code} OK", headers, "HTTP/1.1"),
            warc_headers_dict={"WARC-Date": at.strftime("%Y-%m-%dT%H:%M:%SZ")},
        )
    )


def _weeks_of_captures(path: Path, site: SimulatedSite, origin: str, start: datetime) -> int:
    """Four weekly crawls (the sitemap, then every page an hour later), the site changing
    between: in the week after each crawl, clear of the next one's captures."""
    changed = 0
    with path.open("wb") as out, requests.Session() as session:
        writer = WARCWriter(out, gzip=True)
        for week in range(4):
            at = start + timedelta(days=7 * week)
            _capture(writer, session, origin + "/sitemap.xml", at)
            for page in sorted(site.pages):
                _capture(writer, session, origin + page, at + timedelta(hours=1))
            site.clock = at + timedelta(hours=2)
            changed += len(site.tick(timedelta(days=6))) if week < 3 else 0
    return changed


def test_a_backfilled_warc_gives_the_next_audit_weeks_of_evidence(db_url, capsys, tmp_path):
    site = SimulatedSite("backfill", {"pages": BEHAVIOURS["accurate-no-structured"]}, 40, seed=6)
    with SiteServer(site) as server:
        origin = server.origin
        audit = ["audit", origin, "--db", db_url, "--delay", "0", "--json", "--sample"]
        assert main([*audit, "20"]) == 0
        assert json.loads(capsys.readouterr().out)["verdict"] == "inconclusive"
        warc = tmp_path / "weeks.warc.gz"
        start = datetime.now(UTC) - timedelta(days=30)
        changed = _weeks_of_captures(warc, site, origin, start)
        assert main(["plan", origin, "--db", db_url, "--format", "text", "--no-walk"]) == 0
        capsys.readouterr()
        args = ["crawled", "--from", str(warc), "--backfill", "--db", db_url, "--json"]
        assert main(args) == 0
        captured = capsys.readouterr()
        summary = json.loads(captured.out)
        assert "4 sitemap captures listing 40 URLs" in captured.err
        assert summary["recorded"] == 160 and summary["not_listed"] == 0
        assert summary["changed"] == changed and summary["unchanged"] == 120 - changed
        with History.open(db_url) as history:
            counts = history.crawl_counts(origin, start - timedelta(days=1))
        (evidence,) = counts.values()
        # each week's pages against the next capture made after them: a page changed the
        # week after its fetch cannot tell (its lastmod is later); the last week's
        # unchanged pages wait for a walk after them, the next audit's
        assert evidence.compared + evidence.pending < 120
        assert evidence.compared + evidence.pending >= 120 - changed
        assert 0 < evidence.pending < 40
        assert 0 < evidence.changed <= changed
        assert evidence.advanced == evidence.both == evidence.changed  # an accurate lastmod
        assert main([*audit, "2"]) == 0
        second = json.loads(capsys.readouterr().out)

    assert second["verdict"] == "trusted", second["reasons"]
    (segment,) = second["segments"]
    earlier = segment["crawled_earlier"]  # weeks of the crawl, before this run
    assert earlier["pending"] == 0 and earlier["compared"] == evidence.compared + evidence.pending
    assert segment["window"]["compared"] >= earlier["compared"]


def test_backfill_needs_a_warc_file(db_url, capsys):
    assert main(["crawled", "--from", "-", "--format", "warc", "--backfill", "--db", db_url]) == 2
    assert "--backfill reads one WARC file" in capsys.readouterr().err
