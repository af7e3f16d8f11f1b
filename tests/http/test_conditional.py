"""Conditional requests: the validators a previous response gave, sent back as headers.

Only values a server could have sent are sent back: a hostile ETag or Last-Modified
(line breaks, control characters, an unreadable date, a huge value) is left out rather
than put on the wire.
"""

from __future__ import annotations

from auditor.http import HttpClient, HttpOptions, Response, conditional_headers
from tests.loopback import LoopbackServer, send

ETAG = '"5f3a-1b2c"'
DATE = "Sun, 29 Nov 2026 19:58:00 GMT"


def test_both_validators_are_sent_back():
    assert conditional_headers(ETAG, DATE) == {"If-None-Match": ETAG, "If-Modified-Since": DATE}


def test_a_weak_etag_and_surrounding_spaces():
    assert conditional_headers(' W/"abc" ', None) == {"If-None-Match": 'W/"abc"'}
    assert conditional_headers(None, f"  {DATE} ") == {"If-Modified-Since": DATE}


def test_nothing_to_send_back():
    assert conditional_headers(None, None) == {}
    assert conditional_headers("", "  ") == {}


def test_hostile_values_are_left_out():
    for etag in ('"a"\r\nX-Injected: 1', '"a\x00b"', '"caf\xe9"', '"' + "x" * 5000 + '"'):
        assert conditional_headers(etag, None) == {}, etag
    for date in ("yesterday", "Sun, 29 Nov 2026 19:58:00 GMT\r\nX: 1", "2026-11-29"):
        assert conditional_headers(None, date) == {}, date


def test_the_client_sends_request_headers_on_every_hop():
    with LoopbackServer() as server:
        moved = {"Location": "/new.xml"}
        server.routes["/old.xml"] = lambda h: send(h, 301, b"", "text/plain", moved)
        server.routes["/new.xml"] = lambda h: send(h, 304)
        with HttpClient(HttpOptions(timeout=5, retries=0)) as client:
            response = client.get(server.url("/old.xml"), headers=conditional_headers(ETAG, DATE))
            assert isinstance(response, Response) and response.status == 304
            assert response.redirects == [server.url("/new.xml")]
            response.close()
            plain = client.get(server.url("/new.xml"))
            assert isinstance(plain, Response)
            plain.close()
    first, second, third = server.log
    for logged in (first, second):
        assert logged.headers["If-None-Match"] == ETAG
        assert logged.headers["If-Modified-Since"] == DATE
    assert "If-None-Match" not in third.headers  # headers are per request, not the session's
