"""Logs a user can follow: -v/-q on every command, log lines on stderr, stdout left pure.

Through the real CLI (``main`` with capsys) against loopback servers; the log
events of the HTTP layer and the sampler's pacing are also checked in the
library, with an injected sleep so no test waits on a real delay.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.cli import build_parser, main
from auditor.http import HttpClient, HttpOptions, Response
from auditor.logs import Progress
from auditor.sampler import HostPacer, PageFetcher, RobotsPolicy
from tests.loopback import LoopbackServer, send

PROJECT = Path(__file__).resolve().parent.parent
HTML = b"<html><head><title>t</title></head><body><p>hello</p></body></html>"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def _log_lines(err: str) -> list[str]:
    """Stderr lines that are log records (the format: seconds, level, logger, message)."""
    levels = (" DEBUG ", " INFO ", " WARNING ", " ERROR ")
    return [line for line in err.splitlines() if any(level in line for level in levels)]


def _small_site(serve) -> LoopbackServer:
    """robots.txt keeping auditor out of /private/, a sitemap of three pages."""
    server = serve(routes={})

    def robots(handler) -> None:
        text = f"User-agent: *\nDisallow: /private/\nSitemap: {server.origin}/sitemap.xml\n"
        send(handler, 200, text.encode(), "text/plain")

    def sitemap(handler) -> None:
        urls = "".join(
            f"<url><loc>{server.origin}{path}</loc><lastmod>2026-11-1{i}</lastmod></url>"
            for i, path in enumerate(("/a.html", "/b.html", "/private/c.html"))
        )
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        send(handler, 200, body.encode())

    server.routes.update(
        {
            "/robots.txt": robots,
            "/sitemap.xml": sitemap,
            "/a.html": lambda h: send(h, 200, HTML, "text/html"),
            "/b.html": lambda h: send(h, 200, HTML, "text/html"),
        }
    )
    return server


# -- every command --------------------------------------------------------------------
@pytest.mark.parametrize("command", sorted(_subcommands()))
def test_every_command_takes_verbose_and_quiet(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "-v, --verbose" in text and "-q, --quiet" in text

    parser = _subcommands()[command]
    actions = parser._option_string_actions
    assert actions["-v"] is actions["--verbose"] and actions["-q"] is actions["--quiet"]


def test_verbose_and_quiet_together_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["history", "-v", "-q"])
    assert exit_.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_history_runs_with_either_option(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite3")
    assert main(["history", "--db", db, "-vv"]) == 0
    assert main(["history", "--db", db, "-q", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out.splitlines()[-1]) == []


# -- walk -----------------------------------------------------------------------------
def test_a_default_walk_prints_no_log_line(serve, capsys):
    server = _small_site(serve)
    assert main(["walk", server.origin]) == 0
    captured = capsys.readouterr()

    assert _log_lines(captured.err) == []
    assert captured.err.splitlines() == ["auditor: 3 URLs from 1 of 1 sitemap file, 0 problems"]


def test_verbose_walk_logs_each_request_and_file_read_and_stdout_stays_jsonl(serve, capsys):
    server = _small_site(serve)
    assert main(["walk", server.origin, "-v"]) == 0
    captured = capsys.readouterr()

    records = [json.loads(line) for line in captured.out.splitlines()]  # every line is JSON
    assert len(records) == 3 and all(r["loc"].startswith(server.origin) for r in records)
    lines = _log_lines(captured.err)
    robots = [line for line in lines if f"GET {server.origin}/robots.txt -> 200" in line]
    sitemap = [line for line in lines if f"GET {server.origin}/sitemap.xml -> 200" in line]
    assert len(robots) == 1 and len(sitemap) == 1
    assert "bytes" in sitemap[0] and " s" in sitemap[0]
    (read,) = [line for line in lines if f"read {server.origin}/sitemap.xml" in line]
    assert "urlset" in read and "3 entries" in read and "bytes" in read
    assert all(" INFO " in line for line in lines)  # -v: INFO, not DEBUG
    assert captured.err.splitlines()[-1].startswith("auditor: 3 URLs")  # the summary stays


def test_very_verbose_csv_walk_keeps_stdout_pure_csv(serve, capsys):
    server = _small_site(serve)
    assert main(["walk", server.origin, "-vv", "--format", "csv"]) == 0
    captured = capsys.readouterr()

    rows = list(csv.reader(io.StringIO(captured.out)))
    header, body = rows[0], rows[1:]
    assert header[0] == "loc" and len(body) == 3
    assert all(len(row) == len(header) and row[0].startswith(server.origin) for row in body)
    assert _log_lines(captured.err)


def test_in_a_real_process_logs_and_data_take_separate_streams(serve):
    server = _small_site(serve)
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "walk", server.origin, "-v"],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert len([json.loads(line) for line in done.stdout.splitlines()]) == 3
    assert any(
        f"GET {server.origin}/sitemap.xml -> 200" in line for line in done.stderr.splitlines()
    )
    assert "INFO" not in done.stdout


def test_quiet_walk_prints_nothing_on_stderr(serve, capsys):
    server = _small_site(serve)
    assert main(["walk", server.origin, "-q"]) == 0
    captured = capsys.readouterr()

    assert captured.err == ""
    assert len([json.loads(line) for line in captured.out.splitlines()]) == 3


def test_quiet_still_says_when_nothing_could_be_read(serve, capsys):
    server = serve(routes={})  # every path 404s
    assert main(["walk", server.origin, "-q"]) == 1
    captured = capsys.readouterr()

    assert captured.out == ""
    assert captured.err == "auditor: no sitemap could be read\n"


def test_verbose_walk_logs_each_problem_as_it_is_recorded(serve, capsys):
    server = serve(routes={})
    index = (
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{server.origin}/gone.xml</loc></sitemap>"
        "<sitemap><loc>http://elsewhere.invalid/s.xml</loc></sitemap></sitemapindex>"
    )
    server.routes["/sitemap.xml"] = lambda h: send(h, 200, index.encode())
    assert main(["walk", server.url("/sitemap.xml"), "-v"]) == 0  # the index was read
    lines = _log_lines(capsys.readouterr().err)

    assert any(f"GET {server.origin}/gone.xml -> 404" in line for line in lines)
    assert any("http-error" in line and f"{server.origin}/gone.xml" in line for line in lines)
    assert any("cross-host" in line and "elsewhere.invalid" in line for line in lines)


def test_a_failed_connection_is_logged(capsys):
    assert main(["walk", "http://127.0.0.1:9/sitemap.xml", "-v"]) == 1
    lines = _log_lines(capsys.readouterr().err)
    assert any("GET http://127.0.0.1:9/sitemap.xml failed" in line for line in lines)


# -- audit ----------------------------------------------------------------------------
def test_verbose_audit_logs_the_robots_skip_and_keeps_json_pure(serve, tmp_path, capsys):
    server = _small_site(serve)
    db, out = str(tmp_path / "h.sqlite3"), str(tmp_path / "reports")
    argv = ["audit", server.origin, "--db", db, "--out", out, "--delay", "0", "--json"]
    assert main([*argv, "-v"]) == 0
    captured = capsys.readouterr()

    result = json.loads(captured.out)
    assert result["sample"]["skipped_robots"] == 1
    lines = _log_lines(captured.err)
    (skip,) = [line for line in lines if f"{server.origin}/private/c.html" in line]
    assert "skipped" in skip and "robots" in skip
    assert any(f"GET {server.origin}/a.html -> 200" in line for line in lines)
    assert any("robots.txt" in line and "parsed" in line for line in lines)


def test_very_verbose_audit_logs_the_pauses_between_requests(serve, tmp_path, capsys):
    server = _small_site(serve)
    db, out = str(tmp_path / "h.sqlite3"), str(tmp_path / "reports")
    argv = ["audit", server.origin, "--db", db, "--out", out, "--delay", "0.2"]
    assert main([*argv, "-vv"]) == 0
    lines = _log_lines(capsys.readouterr().err)

    waits = [line for line in lines if " DEBUG " in line and "waiting" in line]
    assert len(waits) == 1 and "127.0.0.1" in waits[0]  # two pages, one pause between


def test_default_and_quiet_audit_print_no_log_line(serve, tmp_path, capsys):
    server = _small_site(serve)
    db, out = str(tmp_path / "h.sqlite3"), str(tmp_path / "reports")
    argv = ["audit", server.origin, "--db", db, "--out", out, "--delay", "0"]
    assert main(argv) == 0
    assert _log_lines(capsys.readouterr().err) == []
    assert main([*argv, "-q"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and f"{server.origin}: " in captured.out


# -- the library: handlers are the CLI's business -------------------------------------
def test_the_library_configures_no_handler_and_main_leaves_none_behind(serve, capsys):
    package = logging.getLogger("auditor")
    before = list(package.handlers)
    assert any(isinstance(h, logging.NullHandler) for h in before)
    assert not any(type(h) is logging.StreamHandler for h in before)

    server = _small_site(serve)
    assert main(["walk", server.origin, "-vv"]) == 0
    assert package.handlers == before and package.level == logging.NOTSET


def test_retries_are_logged_with_their_reason(serve, caplog):
    calls = {"n": 0}

    def flaky(handler) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            send(handler, 429, b"", "text/plain", {"Retry-After": "7"})
        elif calls["n"] == 2:
            send(handler, 503, b"", "text/plain")
        else:
            send(handler, 200, b"ok", "text/plain")

    server = serve(routes={"/flaky": flaky})
    waits: list[float] = []
    client = HttpClient(HttpOptions(retries=2, backoff=0.5))
    client._sleep = waits.append
    with caplog.at_level(logging.INFO, logger="auditor"):
        response = client.get(server.url("/flaky"))
    assert isinstance(response, Response) and response.status == 200
    response.close()

    assert waits == [7.0, 1.0]
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert len(retries) == 2
    assert "429" in retries[0] and "Retry-After 7" in retries[0] and "7 s" in retries[0]
    assert "503" in retries[1] and "backoff" in retries[1] and "1 s" in retries[1]


def test_a_retry_after_over_the_cap_is_logged_as_not_waited_for(serve, caplog):
    server = serve(
        routes={"/busy": lambda h: send(h, 429, b"", "text/plain", {"Retry-After": "3600"})}
    )
    client = HttpClient(HttpOptions(retries=2))
    client._sleep = lambda _s: pytest.fail("must not wait")
    with caplog.at_level(logging.INFO, logger="auditor"):
        response = client.get(server.url("/busy"))
    assert isinstance(response, Response) and response.status == 429
    response.close()
    assert any("3600" in r.getMessage() and "not" in r.getMessage() for r in caplog.records)


def test_the_pacer_logs_each_wait_and_each_slow_down(caplog):
    now = [100.0]
    slept: list[float] = []
    pacer = HostPacer(2.0, clock=lambda: now[0], sleep=slept.append)
    with caplog.at_level(logging.DEBUG, logger="auditor"):
        pacer.finished("example.com")
        pacer.wait_turn("example.com")
        pacer.slow_down("example.com", 30.0)

    assert slept == [2.0]
    messages = [(r.levelno, r.getMessage()) for r in caplog.records]
    waits = [m for level, m in messages if level == logging.DEBUG and "waiting" in m]
    assert len(waits) == 1 and "2 s" in waits[0] and "example.com" in waits[0]
    slow = [m for level, m in messages if level == logging.INFO and "overloaded" in m]
    assert len(slow) == 1 and "30 s" in slow[0]


def test_the_sampler_logs_an_overloaded_page_being_asked_again(serve, caplog):
    calls = {"n": 0}

    def busy_once(handler) -> None:
        calls["n"] += 1
        status = 503 if calls["n"] == 1 else 200
        send(handler, status, HTML, "text/html", {"Retry-After": "0"})

    server = serve(routes={"/busy": busy_once})
    policy = RobotsPolicy(server.url("/robots.txt"), "allow-all", "test")
    pacer = HostPacer(0.0, sleep=lambda _s: None)
    fetcher = PageFetcher(server.origin, HttpClient(HttpOptions(retries=0)), policy, pacer)
    with caplog.at_level(logging.INFO, logger="auditor"):
        page = fetcher.fetch(server.url("/busy"))

    assert page.ok
    again = [r.getMessage() for r in caplog.records if "asking again" in r.getMessage()]
    assert len(again) == 1 and "503" in again[0] and server.url("/busy") in again[0]


# -- the progress line ----------------------------------------------------------------
class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_a_terminal_and_cleared():
    stream = _Terminal()
    progress = Progress(stream)
    progress("walking http://example.com")
    progress.walk(3, 120)
    progress.clear()

    text = stream.getvalue()
    assert "auditor: walking http://example.com" in text and "3 files read, 120 URLs" in text
    assert text.endswith("\r\033[K")


@pytest.mark.parametrize(
    ("stream", "options"),
    [(io.StringIO(), {}), (_Terminal(), {"quiet": True}), (_Terminal(), {"verbose": 1})],
    ids=["not-a-terminal", "quiet", "verbose"],
)
def test_progress_is_not_drawn_off_a_terminal_under_quiet_or_verbose(stream, options):
    progress = Progress(stream, **options)
    progress("sampling 50 pages of 3,000")
    progress.walk(1, 2)
    progress.clear()
    assert stream.getvalue() == ""


def test_progress_under_verbose_becomes_log_records(caplog):
    with caplog.at_level(logging.INFO, logger="auditor"):
        Progress(_Terminal(), verbose=1)("sampled 3 of 50 pages")
        Progress(_Terminal(), quiet=True)("not shown")
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("auditor.progress", "sampled 3 of 50 pages")
    ]
