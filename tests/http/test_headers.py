"""--header: the added headers reach the site on every request, and their values
appear nowhere else: not in -vv's stderr, not in the history, not in the reports.
A User-Agent given is refused (auditor's own names its contact)."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.cli import main
from auditor.http import HttpOptions
from auditor.http.extra_headers import HeaderError, parse_header
from tests.http.test_proxy import small_site

SECRET = "s3cr3t-partner-key-7f2c"
COOKIE = "session=zz-cookie-token-91ab"


def _files_holding(root: Path, text: str) -> list[Path]:
    needle = text.encode()
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_headers_reach_every_request_and_their_values_stay_out_of_logs_history_reports(
    serve, tmp_path, capsys
):
    server = small_site(serve)
    out = tmp_path / "out"
    args = [
        "audit",
        server.origin,
        "--header",
        f"X-Api-Key: {SECRET}",
        "--header",
        f"Cookie: {COOKIE}",
    ]
    args += ["--db", str(out / "h.sqlite3"), "--out", str(out / "reports"), "--delay", "0.01"]
    assert main([*args, "--json", "-vv"]) == 0
    assert (
        main(
            ["export", "--format", "jsonl", "--db", str(out / "h.sqlite3"), "--out", str(out / "x")]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert len(server.log) >= 4  # robots.txt, the sitemap, two pages
    for request in server.log:
        assert request.headers["X-Api-Key"] == SECRET, request.path
        assert request.headers["Cookie"] == COOKIE, request.path
        assert request.headers["User-Agent"].startswith("auditor/")
    assert "INFO http" in captured.err  # -vv logged every request...
    assert "X-Api-Key" in captured.err  # ...and names the added headers...
    for value in (SECRET, COOKIE, "zz-cookie-token"):  # ...never their values
        assert value not in captured.err and value not in captured.out
        assert _files_holding(out, value) == []
    assert (out / "h.sqlite3").is_file() and list((out / "reports").rglob("*.html"))


def test_a_user_agent_header_is_refused_with_a_clear_message(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["walk", "https://example.com", "--header", "user-agent: Mozilla/5.0 secretly"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "User-Agent" in err or "user-agent" in err
    assert "--contact" in err and "secretly" not in err


@pytest.mark.parametrize(
    "text",
    [
        "no colon here",
        "Bad Name: x",
        "X-Key: a\r\nInjected: 1",
        "Host: other.example",
        "Accept-Encoding: br",
    ],
)
def test_unsendable_headers_are_refused_without_quoting_their_value(text):
    with pytest.raises(HeaderError) as refused:
        parse_header(text)
    assert "Injected" not in str(refused.value) and "other.example" not in str(refused.value)


def test_the_options_repr_keeps_values_out():
    options = HttpOptions(headers=(("X-Api-Key", SECRET),), proxy="http://u:pw-123@127.0.0.1:3128")
    assert SECRET not in repr(options) and "pw-123" not in repr(options)
    assert "X-Api-Key" in options.described and "u:***@127.0.0.1:3128" in options.described
    with pytest.raises(HeaderError):
        HttpOptions(headers=(("User-Agent", "x"),))
