"""What a request puts on the wire: the session's headers in their order, the options'
added headers, a request's own (conditional) headers, the cookies a site set; made
without requests' per-call merging of settings (a third of its CPU a request)."""

from __future__ import annotations

import pytest
import requests

from auditor.http import FetchFailure, HttpClient, HttpOptions, Response
from auditor.http.codings import ACCEPT_ENCODING
from tests.loopback import send


def _routes():
    return {
        "/set": lambda h: send(h, 200, b"ok", "text/plain", {"Set-Cookie": "visit=7; Path=/"}),
        "/page": lambda h: send(h, 200, b"<p>x</p>", "text/html"),
    }


def test_a_request_carries_the_session_s_headers_its_own_and_the_site_s_cookies(serve):
    server = serve(routes=_routes())
    options = HttpOptions(headers=(("X-Team", "crawl"),))
    with HttpClient(options) as client:
        for path, extra in (("/set", None), ("/page", {"If-None-Match": '"v1"'})):
            response = client.get(server.origin + path, headers=extra)
            assert isinstance(response, Response) and response.status == 200
            b"".join(response.body)  # read to the end: the connection goes back to the pool
            response.close()
    first, second = server.log
    expected = [
        ("User-Agent", options.user_agent),
        ("Accept-Encoding", ACCEPT_ENCODING),
        ("Accept", options.accept),
        ("Connection", "keep-alive"),
        ("X-Team", "crawl"),
    ]
    assert [(k, v) for k, v in first.headers.items() if k != "Host"] == expected
    assert [(k, v) for k, v in second.headers.items() if k != "Host"] == [
        *expected,
        ("If-None-Match", '"v1"'),
        ("Cookie", "visit=7"),
    ]


def test_a_request_is_prepared_without_the_session_s_merging(serve, monkeypatch):
    server = serve(routes=_routes())

    def merging(*_args, **_kwargs):
        raise AssertionError("Session.request merges the session's settings on every call")

    monkeypatch.setattr(requests.Session, "request", merging)
    with HttpClient(HttpOptions()) as client:
        response = client.get(server.origin + "/page")
        assert isinstance(response, Response) and response.status == 200
        response.close()


@pytest.mark.parametrize("url", ["http://[::1", "ftp://127.0.0.1/x", "http:///nohost"])
def test_a_url_requests_cannot_prepare_is_a_failure_not_an_exception(url):
    with HttpClient(HttpOptions(timeout=2)) as client:
        result = client.get(url)
    assert isinstance(result, FetchFailure) and result.code == "http-error"
