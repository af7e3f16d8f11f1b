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
        "/lower": lambda h: send(h, 200, b"ok", "text/plain", {"set-cookie": "lang=en; Path=/"}),
        "/forget": lambda h: send(h, 200, b"ok", "text/plain", {"Set-Cookie": "visit=; Max-Age=0"}),
    }


def _get_all(client: HttpClient, urls: list[str]) -> None:
    for url in urls:
        response = client.get(url)
        assert isinstance(response, Response) and response.status == 200
        b"".join(response.body)
        response.close()


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


def test_a_cookie_the_site_expires_is_no_longer_sent(serve):
    server = serve(routes=_routes())
    with HttpClient(HttpOptions()) as client:
        _get_all(client, [server.origin + p for p in ("/set", "/page", "/forget", "/page")])
    cookies = [request.headers.get("Cookie") for request in server.log]
    assert cookies == [None, "visit=7", "visit=7", None]


def test_a_cookie_set_in_a_lower_case_header_is_kept(serve):
    server = serve(routes=_routes())
    with HttpClient(HttpOptions()) as client:
        _get_all(client, [server.origin + "/lower", server.origin + "/page"])
    assert [request.headers.get("Cookie") for request in server.log] == [None, "lang=en"]


def test_a_client_s_cookies_are_its_own_and_sent_only_to_their_host(serve):
    server, other = serve(routes=_routes()), serve(routes=_routes())
    with HttpClient(HttpOptions()) as client, HttpClient(HttpOptions()) as fresh:
        _get_all(
            client,
            [server.origin + "/set", other.origin.replace("127.0.0.1", "localhost") + "/page"],
        )
        _get_all(fresh, [server.origin + "/page"])
    assert [r.headers.get("Cookie") for r in server.log] == [None, None]
    assert [r.headers.get("Cookie") for r in other.log] == [None]


def test_credentials_in_the_url_are_sent_as_basic_auth(serve):
    server = serve(routes=_routes())
    with HttpClient(HttpOptions()) as client:
        _get_all(client, [server.origin.replace("://", "://ann:s%20cret@") + "/page"])
    (request,) = server.log
    assert request.headers.get("Authorization") == "Basic YW5uOnMgY3JldA=="


def test_a_request_goes_out_without_requests_session_send(serve, monkeypatch):
    server = serve(routes=_routes())

    def send_(*_args, **_kwargs):
        raise AssertionError("Session.send: hooks, a redirect look-ahead, cookies read twice")

    monkeypatch.setattr(requests.Session, "send", send_)
    with HttpClient(HttpOptions()) as client:
        _get_all(client, [server.origin + "/set", server.origin + "/page"])
    assert server.log[1].headers.get("Cookie") == "visit=7"
