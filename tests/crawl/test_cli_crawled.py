"""auditor crawled through the command line: JSON Lines and WARC crawl logs of loopback
sites move the next audit's precision, recall and rates (SQLite and PostgreSQL)."""

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
from tests.crawl.sites import tick_now


def _audit(db_url: str, origin: str, capsys, sample: int = 20) -> dict:
    args = ["audit", origin, "--db", db_url, "--delay", "0", "--sample", str(sample), "--json"]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def _log_line(origin: str, site: SimulatedSite, path: str, at: datetime) -> str:
    version = site.pages[path].version
    row = {"url": origin + path, "fetched_at": at.isoformat(), "status": 200, "hash": f"v{version}"}
    return json.dumps(row)


def _jsonl(tmp_path: Path, name: str, lines: list[str]) -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _crawled(capsys, db_url: str, source: str) -> tuple[dict, str]:
    assert main(["crawled", "--from", source, "--db", db_url, "--json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def test_a_jsonl_crawl_log_condemns_a_frozen_lastmod_the_audit_sampled_too_little(
    db_url, capsys, tmp_path
):
    site = SimulatedSite("frozen", {"pages": BEHAVIOURS["frozen"]}, 60, seed=4)
    with SiteServer(site) as server:
        origin = server.origin
        assert _audit(db_url, origin, capsys)["verdict"] == "trusted"
        first = datetime.now(UTC)
        lines = [_log_line(origin, site, p, first) for p in sorted(site.pages)]
        summary, _ = _crawled(capsys, db_url, _jsonl(tmp_path, "day1.jsonl", lines))
        assert summary["recorded"] == 60
        changed = set(site.tick())  # the pages change, their frozen lastmod does not
        assert main(["plan", origin, "--db", db_url, "--format", "text"]) == 0  # walks again
        capsys.readouterr()
        later = datetime.now(UTC)
        lines = [_log_line(origin, site, p, later) for p in sorted(site.pages)]
        summary, _ = _crawled(capsys, db_url, _jsonl(tmp_path, "day4.jsonl", lines))
        assert (summary["changed"], summary["unchanged"]) == (len(changed), 60 - len(changed))
        assert summary["pending"] == 60  # the plan walked before them: weighed at the audit
        second = _audit(db_url, origin, capsys, sample=2)  # two pages could not condemn

    assert second["verdict"] == "untrusted" and second["degraded"]
    assert "changed-without-lastmod" in {r["code"] for r in second["reasons"]}
    assert second["changes"]["compared"] >= 60  # the crawl's comparisons, at no request
    assert second["changes"]["recall"] == 0.0
    (segment,) = second["segments"]
    assert segment["change_rate"] > 0


def _warc(path: Path, origin: str, paths: list[str], at: datetime) -> None:
    with path.open("wb") as out, requests.Session() as session:
        writer = WARCWriter(out, gzip=True)
        for p in paths:
            answer = session.get(origin + p, timeout=10)
            headers = [(k, v) for k, v in answer.headers.items() if k.lower() != "content-length"]
            record = writer.create_warc_record(
                origin + p,
                "response",
                payload=io.BytesIO(answer.content),
                length=len(answer.content),
                http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"),
                warc_headers_dict={"WARC-Date": at.strftime("%Y-%m-%dT%H:%M:%SZ")},
            )
            writer.write_record(record)


def test_a_warc_of_bodies_measures_an_accurate_lastmod_template_left_out(db_url, capsys, tmp_path):
    site = SimulatedSite("warc", {"pages": BEHAVIOURS["accurate-no-structured"]}, 40, seed=4)
    with SiteServer(site) as server:
        origin = server.origin
        assert _audit(db_url, origin, capsys)["verdict"] == "inconclusive"
        first = datetime.now(UTC)
        _warc(tmp_path / "one.warc.gz", origin, sorted(site.pages), first)
        _crawled(capsys, db_url, str(tmp_path / "one.warc.gz"))
        changed = set(tick_now(site))  # pages edited, their lastmod with them
        assert main(["plan", origin, "--db", db_url, "--format", "text"]) == 0
        capsys.readouterr()
        a_second_ago = datetime.now(UTC) - timedelta(seconds=1)  # a WARC-Date's second over
        _warc(tmp_path / "two.warc.gz", origin, sorted(site.pages), a_second_ago)
        summary, _ = _crawled(capsys, db_url, str(tmp_path / "two.warc.gz"))
        # every page's boilerplate (a token, a trending word, the render time) differs
        assert (summary["changed"], summary["unchanged"]) == (len(changed), 40 - len(changed))
        second = _audit(db_url, origin, capsys, sample=2)

    assert second["verdict"] == "trusted", second["reasons"]
    assert second["changes"]["precision"] == 1.0 and second["changes"]["recall"] == 1.0


def test_malformed_lines_are_named_and_skipped_and_nothing_else_is_lost(db_url, capsys, tmp_path):
    site = SimulatedSite("bad", {"pages": BEHAVIOURS["no-lastmod"]}, 6, seed=4)
    with SiteServer(site) as server:
        origin = server.origin
        _audit(db_url, origin, capsys)
        at = datetime.now(UTC)
        good = [_log_line(origin, site, p, at) for p in sorted(site.pages)]
        lines = [good[0], "{not json", good[1], '{"url": "ftp://x/y", "fetched_at": 1}',
                 good[2], json.dumps({"url": f"{origin}/a", "fetched_at": "yesterday"}), *good[3:],
                 json.dumps({"url": "https://nowhere.example/a", "fetched_at": 1e9})]  # fmt: skip
        summary, err = _crawled(capsys, db_url, _jsonl(tmp_path, "log.jsonl", lines))
        with History.open(db_url) as history:
            site_id = history.site_ids()[origin]
            states = history.crawl_states(site_id, [origin + p for p in site.pages])

    assert summary["recorded"] == 6 and len(states) == 6
    assert summary["malformed"] == 3 and summary["unknown_site"] == 1
    assert "line 2: bad-json" in err and "line 4: bad-url" in err and "line 6: bad-time" in err


def test_several_logs_are_read_in_turn_and_a_problem_names_its_file(db_url, capsys, tmp_path):
    site = SimulatedSite("several", {"pages": BEHAVIOURS["no-lastmod"]}, 6, seed=1)
    with SiteServer(site) as server:
        origin = server.origin
        _audit(db_url, origin, capsys)
        at = datetime.now(UTC) + timedelta(minutes=1)
        paths = sorted(site.pages)
        one = _jsonl(tmp_path, "one.jsonl", [_log_line(origin, site, p, at) for p in paths[:3]])
        lines = [_log_line(origin, site, p, at) for p in paths[3:]] + ["{not json"]
        two = _jsonl(tmp_path, "two.jsonl", lines)
        args = ["crawled", "--from", one, two, "--db", db_url, "--json"]
        assert main(args) == 0
        captured = capsys.readouterr()

    summary = json.loads(captured.out)
    assert summary["recorded"] == 6 and summary["malformed"] == 1
    assert f"auditor: {two}: line 4: bad-json" in captured.err


def test_the_summary_reads_as_plain_english(tmp_path, capsys):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("one", {"pages": BEHAVIOURS["accurate-jsonld"]}, 4, seed=1)
    with SiteServer(site) as server:
        _audit(db, server.origin, capsys, sample=4)
        line = _log_line(server.origin, site, sorted(site.pages)[0], datetime.now(UTC))
        assert main(["crawled", "--from", _jsonl(tmp_path, "one.jsonl", [line]), "--db", db]) == 0
    assert capsys.readouterr().out.startswith("recorded 1 fetch of 1 site (")


def test_a_file_that_is_no_warc_is_named_by_its_record_not_a_line(tmp_path, capsys):
    garbage = tmp_path / "crawl.warc"
    garbage.write_bytes(bytes(range(7, 250)) * 12)
    db = str(tmp_path / "history.sqlite3")
    assert main(["crawled", "--from", str(garbage), "--db", db]) == 1
    err = capsys.readouterr().err
    assert err.startswith("auditor: record 1: bad-record: not a WARC file")
    assert "line" not in err.split(":")[1]
