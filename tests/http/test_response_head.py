"""A response's headers read without the email package: the same ``HTTPMessage`` as
``http.client.parse_headers`` (every attribute), whatever the lines; and the client's
connections read through it, the stdlib's ``begin`` it copies being the one known."""

from __future__ import annotations

import hashlib
import http.client
import inspect
import io
import sys

import pytest

from auditor.http import HttpClient, Response
from auditor.http.deadline import WatchedAdapter
from auditor.http.response_head import (
    HeadReadingResponse,
    _plain_headers,
    parse_header_lines,
)
from tests.loopback import send

PLAIN = [
    b"Server: BaseHTTP/0.6 Python/3.11\r\n",
    b"Date: Fri, 04 Dec 2026 20:00:00 GMT\r\n",
    b"Content-Type: text/html; charset=utf-8\r\n",
    b"Content-Length: 360\r\n",
]
ODD = [
    b"X-Folded: one\r\n two\r\n",  # a continuation
    b"X-Folded: one\r\n\ttwo\r\n",
    b" X-First: continued\r\n",  # the first line a continuation
    b": no name\r\n",
    b"No colon at all\r\n",
    b"From someone@example.org\r\n",
    b"X-Cr: a\rb\r\n",  # a stray CR splits the email parser's line
    b"X-Lf-Only: v\n",
    b"X-Spaces:   padded   \r\n",
    b"X-Tabs:\t\tv\t\r\n",
    b"X-Empty:\r\n",
    b"X-Colons: a:b:c\r\n",
    b"X-Latin: caf\xe9 \x85 \x0b \x0c\r\n",
    b"Set-Cookie: a=1; Path=/\r\n",
    b"set-cookie: b=2\r\n",
    b"Content-Type: multipart/mixed; boundary=x\r\n",
    b"Content-Type: Message/RFC822\r\n",
    b"content-type: message/delivery-status\r\n",
    b"Content-Type: text\r\n",
    b"X-Ctl: \x00\x7f\r\n",
    b"X Space: v\r\n",
    b"X-Trailing-CR: v\r\r\n",
]
ENDINGS = [b"\r\n", b"\n", b""]


def _shape(message: object) -> object:
    """A message's every attribute, messages in its payload by their own, defects by repr."""
    if isinstance(message, list):
        return [_shape(part) for part in message]
    if not hasattr(message, "defects"):
        return message
    shape = dict(vars(message))
    shape["defects"] = [repr(d) for d in shape["defects"]]
    shape["_payload"] = _shape(shape["_payload"])
    shape["__class__"] = type(message)
    return shape


def _same(lines: list[bytes]) -> None:
    expected = http.client.parse_headers(io.BytesIO(b"".join(lines)))
    got = parse_header_lines(lines)
    assert _shape(got) == _shape(expected)
    assert got.items() == expected.items()


@pytest.mark.parametrize("ending", ENDINGS)
def test_plain_headers_make_the_email_parser_s_message(ending):
    assert (_plain_headers([*PLAIN, ending]) is None) == (ending == b"")  # read here
    _same([*PLAIN, ending])
    _same([ending])  # no header at all


@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("ending", ENDINGS)
def test_any_line_makes_the_email_parser_s_message(odd, ending):
    for lines in ([odd, *PLAIN], [*PLAIN, odd], [PLAIN[0], odd, PLAIN[1]]):
        _same([*lines, ending])


def test_a_line_cut_off_by_the_end_of_the_stream():
    _same([*PLAIN, b"X-Cut: half"])
    _same([b"X-Cut: half"])


def test_the_stdlib_begin_copied_is_the_one_known():
    """``HeadReadingResponse.begin`` copies Python 3.11-3.13's: another Python's must be
    read again (and its hash added here) before the copy is trusted."""
    source = inspect.getsource(http.client.HTTPResponse.begin)
    known = {"e06ec06b086c7ea0"}  # 3.11.7, 3.12.1, 3.13.0
    assert hashlib.sha256(source.encode()).hexdigest()[:16] in known, sys.version


def test_the_client_s_connections_read_through_it(serve):
    server = serve(routes={"/p": lambda h: send(h, 200, b"<p>x</p>", "text/html")})
    assert (
        WatchedAdapter().poolmanager.pool_classes_by_scheme["http"].ConnectionCls.response_class
        is HeadReadingResponse
    )
    with HttpClient() as client:
        response = client.get(server.origin + "/p")
        assert isinstance(response, Response) and response.status == 200
        assert b"".join(response.body) == b"<p>x</p>"
        assert response.header("content-type") == "text/html"
