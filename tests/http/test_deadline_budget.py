"""One deadline per request, whatever happens inside it: retries, their waits, a body cut off.

``--timeout`` bounds a whole ``HttpClient.get``: every attempt, redirect and Retry-After
wait together. A body the deadline cuts off is a ``timeout``, never a complete read.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.http import FetchFailure, HttpClient, HttpOptions, Response
from tests.loopback import LoopbackServer, send

PAGE = b"<html><head><title>t</title></head><body><p>the start of a page</p>"


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def server(shared_server: LoopbackServer) -> LoopbackServer:
    """The module's loopback server with no routes and an empty log."""
    shared_server.routes.clear()
    shared_server.log.clear()
    return shared_server


class FakeTime:
    """A monotonic clock that a recorded sleep moves forward instead of sleeping."""

    def __init__(self) -> None:
        self.slept: list[float] = []
        self._offset = 0.0

    def clock(self) -> float:
        return time.monotonic() + self._offset

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._offset += seconds


def start_raw(handler, headers: dict[str, str]) -> None:
    """Status 200 and headers only; the route writes the body itself, then hangs up."""
    handler.send_response(200)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.close_connection = True


def reset(handler) -> None:
    """Drop the connection with a TCP reset instead of a clean close."""
    handler.wfile.flush()
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()


def read_whole(result: Response | FetchFailure) -> bytes:
    assert isinstance(result, Response), result
    return b"".join(result.body)


# -- retries share the request's deadline -------------------------------------------------------


def test_retry_waits_count_against_the_deadline(server):
    # Each wait is 2 s of a 5 s budget: two fit, the third would end past the deadline.
    server.routes["/busy"] = lambda h: send(h, 503, b"", "text/plain", {"Retry-After": "2"})
    fake = FakeTime()
    options = HttpOptions(timeout=5, retries=3, backoff=0.1)
    with HttpClient(options, clock=fake.clock, sleep=fake.sleep) as client:
        result = client.get(server.url("/busy"))
        assert isinstance(result, Response)
        result.close()
    assert result.status == 503
    assert fake.slept == [2.0, 2.0]
    assert len(server.log) == 3


def test_a_retry_wait_that_would_pass_the_deadline_is_not_taken(server):
    server.routes["/busy"] = lambda h: send(h, 429, b"", "text/plain", {"Retry-After": "7"})
    fake = FakeTime()
    with HttpClient(HttpOptions(timeout=5, retries=2), clock=fake.clock, sleep=fake.sleep) as c:
        result = c.get(server.url("/busy"))
        assert isinstance(result, Response)
        result.close()
    assert result.status == 429  # the answer stands; no wait, no second request
    assert fake.slept == []
    assert len(server.log) == 1


def test_slow_attempts_share_one_deadline(server, hold):
    # Each attempt takes 0.7 s of a 1 s budget: the retry gets what is left, not a fresh second.
    def slow_503(handler):
        hold.wait(0.7)
        send(handler, 503, b"", "text/plain")

    server.routes["/slow"] = slow_503
    started = time.monotonic()
    with HttpClient(HttpOptions(timeout=1.0, retries=2, backoff=0.01)) as client:
        result = client.get(server.url("/slow"))
    assert isinstance(result, FetchFailure), result
    assert result.code == "timeout"
    assert len(server.log) <= 2
    assert time.monotonic() - started < 5


# -- a body the deadline cuts off ---------------------------------------------------------------


def test_a_body_without_length_cut_by_the_deadline_is_a_timeout(server, hold):
    # No Content-Length, no chunking: the body ends when the connection does. When the
    # watchdog shuts the socket, the read ends as quietly as a finished page would.
    def drip(handler):
        start_raw(handler, {"Content-Type": "text/html"})
        handler.wfile.write(PAGE)
        while not hold.wait(0.1):
            handler.wfile.write(b" ")

    server.routes["/drip"] = drip
    with HttpClient(HttpOptions(timeout=0.6, retries=0)) as client:
        result = client.get(server.url("/drip"))
        data = read_whole(result)
    assert data.startswith(PAGE)  # what arrived is kept
    assert result.body.problem is not None
    assert result.body.problem[0] == "timeout"
    assert not result.body.complete


def test_a_body_without_length_that_ends_in_time_is_complete(server):
    def whole(handler):
        start_raw(handler, {"Content-Type": "text/html"})
        handler.wfile.write(PAGE + b"</body></html>")

    server.routes["/whole"] = whole
    with HttpClient(HttpOptions(timeout=5, retries=0)) as client:
        result = client.get(server.url("/whole"))
        data = read_whole(result)
    assert data == PAGE + b"</body></html>"
    assert result.body.problem is None and result.body.complete


@pytest.mark.parametrize("hang_up", ["close", "reset"])
def test_a_body_cut_short_of_its_content_length_is_a_named_problem(server, hang_up):
    def short(handler):
        start_raw(handler, {"Content-Type": "text/html", "Content-Length": "100000"})
        handler.wfile.write(PAGE)
        if hang_up == "reset":
            time.sleep(0.05)
            reset(handler)

    server.routes["/short"] = short
    with HttpClient(HttpOptions(timeout=5, retries=0)) as client:
        result = client.get(server.url("/short"))
        data = read_whole(result)
    assert data == PAGE
    assert result.body.problem is not None
    assert result.body.problem[0] == "http-error"
    assert f"{len(PAGE)} bytes" in result.body.problem[1]
    assert not result.body.complete


def test_a_chunked_body_cut_mid_chunk_is_a_named_problem(server):
    def cut(handler):
        start_raw(handler, {"Content-Type": "text/html", "Transfer-Encoding": "chunked"})
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(PAGE), PAGE) + b"400\r\nonly a few")

    server.routes["/cut"] = cut
    with HttpClient(HttpOptions(timeout=5, retries=0)) as client:
        result = client.get(server.url("/cut"))
        read_whole(result)
    assert result.body.problem is not None
    assert result.body.problem[0] == "http-error"
    assert not result.body.complete


# -- what --timeout bounds, said where a user reads it --------------------------------------------


@pytest.mark.parametrize("command", ["walk", "inspect", "page", "audit", "reverify"])
def test_the_help_says_what_timeout_bounds(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--timeout S" in text
    assert "redirects, retries and their waits included" in text


def test_the_docs_say_what_timeout_bounds():
    walk = Path(__file__).resolve().parents[2] / "docs" / "commands" / "walk.md"
    assert "redirects, retries and their waits included" in " ".join(walk.read_text().split())
