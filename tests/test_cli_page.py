"""``auditor page`` against real loopback servers and local files."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler

import pytest

from auditor.cli import main
from tests.evidence.helpers import PAGES
from tests.loopback import send

GRAPH = (PAGES / "graph.html").read_bytes()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["page", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _render_time_page(handler: BaseHTTPRequestHandler) -> None:
    # The page stamps dateModified with the moment it is rendered; the server's own Date
    # header (added by send_response) is written in the same second.
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    body = (
        '<html><head><script type="application/ld+json">{"@context": "https://schema.org", '
        f'"@type": "Article", "dateModified": "{now}"}}</script></head>'
        "<body><article><p>Always fresh, supposedly.</p></article></body></html>"
    ).encode()
    last_modified = format_datetime(datetime(2026, 11, 1, 8, 0, tzinfo=UTC), usegmt=True)
    send(handler, 200, body, "text/html; charset=utf-8",
         {"Last-Modified": last_modified, "ETag": '"v1"'})  # fmt: skip


def test_json_for_a_served_page(serve, capsys):
    server = serve("pages")
    code, out, _ = _run(capsys, server.url("/graph.html"), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["status"] == 200
    assert data["date_modified"]["source"] == "json-ld"
    assert data["date_modified"]["value"] == "2026-11-03T09:15:30+00:00"
    assert data["date_modified"]["credible"] is True
    assert data["date_published"]["value"] == "2026-11-01T08:00:00+00:00"
    assert len(data["fingerprint"]["exact"]) == 64
    assert server.paths() == ["/graph.html"]


def test_render_time_date_modified_and_last_modified(serve, capsys):
    server = serve(routes={"/fresh": _render_time_page})
    code, out, _ = _run(capsys, server.url("/fresh"), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["date_modified"]["credible"] is False
    assert data["date_modified"]["why_not_credible"] == "render-time-date-modified"
    assert data["http_last_modified"]["value"] == "2026-11-01T08:00:00+00:00"
    assert data["http_last_modified"]["source"] == "http"
    assert data["etag"] == '"v1"'
    assert data["date_header"]


def test_text_summary(serve, capsys):
    server = serve(routes={"/fresh": _render_time_page})
    code, out, _ = _run(capsys, server.url("/fresh"))
    assert code == 0
    assert "NOT credible: render-time-date-modified" in out
    assert "Last-Modified:  2026-11-01T08:00:00+00:00" in out


def test_a_missing_page_is_a_value_and_exit_1(serve, capsys):
    server = serve("pages")
    code, out, _ = _run(capsys, server.url("/nope.html"), "--json")
    assert code == 1
    data = json.loads(out)
    assert (data["error"], data["status"]) == ("http-error", 404)
    assert data["date_modified"] is None


def test_non_html_is_not_downloaded(serve, capsys):
    def pdf(handler: BaseHTTPRequestHandler) -> None:
        send(handler, 200, b"%PDF-1.7" + b"\0" * 10_000, "application/pdf")

    server = serve(routes={"/doc.pdf": pdf})
    code, out, _ = _run(capsys, server.url("/doc.pdf"), "--json")
    assert code == 1
    assert json.loads(out)["error"] == "not-html"


def test_timeout_is_honoured(serve, capsys, hold):
    def slow(handler: BaseHTTPRequestHandler) -> None:
        hold.wait(5)

    server = serve(routes={"/slow": slow})
    started = datetime.now(UTC)
    code, out, _ = _run(capsys, server.url("/slow"), "--json", "--timeout", "0.5")
    assert (datetime.now(UTC) - started).total_seconds() < 3
    assert code == 1
    assert json.loads(out)["error"] == "timeout"


def test_a_local_file_gzip_or_not(tmp_path, capsys):
    packed = tmp_path / "graph.html.gz"
    packed.write_bytes(gzip.compress(GRAPH))
    results = []
    for target in (str(PAGES / "graph.html"), str(packed)):
        code, out, _ = _run(capsys, target, "--json")
        assert code == 0
        results.append(json.loads(out))
    assert results[0]["fingerprint"] == results[1]["fingerprint"]
    assert results[0]["date_modified"]["node_type"] == "NewsArticle"
    assert results[0]["url"].startswith("file://")


def test_a_missing_file_is_a_usage_error(tmp_path, capsys):
    code, _, err = _run(capsys, str(tmp_path / "absent.html"))
    assert code == 2
    assert "no such file" in err
