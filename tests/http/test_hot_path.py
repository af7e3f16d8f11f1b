"""What a request skips doing again: the session's headers are checked once (made again
when they change; refused each time as before), an origin's pool is found by the key
the pool manager made for it (the same pool, the same eviction), and the fleet's
client reads a URL's host once. Counted, never timed."""

from __future__ import annotations

import requests.adapters
import requests.utils
import urllib3

import auditor.fleet.client as fleet_client
import auditor.http.client as http_client
from auditor.fleet.client import GatedHttpClient, TimeLimit
from auditor.fleet.gate import HostGate, HostTable
from auditor.http import FetchFailure, HttpClient, HttpOptions, Response
from tests.loopback import send


def _routes():
    page = lambda h: send(h, 200, b"<p>x</p>", "text/html")  # noqa: E731
    return {"/p": page, "/q": page, "/r": page}


def _get(client: HttpClient, url: str, **kwargs) -> Response:
    response = client.get(url, **kwargs)
    assert isinstance(response, Response) and response.status == 200, response
    b"".join(response.body)
    response.close()
    return response


def _counting(monkeypatch, module, name: str) -> list[object]:
    calls: list[object] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_the_session_s_headers_are_checked_once_and_again_when_they_change(serve, monkeypatch):
    server = serve(routes=_routes())
    checks = _counting(monkeypatch, requests.models, "check_header_validity")
    extra_checks = _counting(monkeypatch, http_client, "check_header_validity")
    with HttpClient(HttpOptions(headers=(("X-Team", "crawl"),))) as client:
        for _ in range(3):
            _get(client, server.origin + "/p", headers={"If-None-Match": '"v1"'})
        assert len(checks) == 5  # the session's five headers, once
        assert len(extra_checks) == 3  # a request's own, each time
        client.session.headers["X-Later"] = "yes"
        _get(client, server.origin + "/p")
        assert len(checks) == 11
        client.session.headers = requests.structures.CaseInsensitiveDict({"X-Only": "this"})
        _get(client, server.origin + "/p")  # a mapping whose changes are not counted
        assert len(checks) == 12
    assert server.log[3].headers.get("X-Later") == "yes"
    assert [
        k for k in server.log[4].headers if k not in ("Host", "User-Agent", "Accept-Encoding")
    ] == ["X-Only"]


def test_a_session_header_requests_refuses_fails_every_request_as_before(serve):
    server = serve(routes=_routes())
    with HttpClient() as client:
        client.session.headers["X-Bad"] = "a\nb"
        for _ in range(2):
            failure = client.get(server.origin + "/p")
            assert isinstance(failure, FetchFailure) and failure.code == "http-error"
            assert "Invalid leading whitespace" in failure.detail
    assert server.log == []


def _ports(adapter) -> set[int]:
    return {key.key_port for key in adapter.poolmanager.pools.keys()}  # noqa: SIM118 - a set


def test_an_origin_s_pool_is_found_by_its_key_the_same_pool_and_eviction(serve, monkeypatch):
    servers = [serve(routes=_routes()) for _ in range(5)]
    asked = _counting(
        monkeypatch, requests.adapters.HTTPAdapter, "build_connection_pool_key_attributes"
    )
    made = _counting(monkeypatch, urllib3.PoolManager, "_new_pool")
    with HttpClient() as client:
        adapter = client.session.get_adapter("http://x/")
        for server in servers[:2]:
            for path in ("/p", "/q", "/r#x"):
                _get(client, server.origin + path)
        assert len(asked) == 2  # once an origin
        assert _ports(adapter) == {servers[0].port, servers[1].port}
        _get(client, servers[0].origin + "/p")  # now the most recent
        assert len(made) == 2  # the same pool, each time
        for server in servers[2:5]:  # three more through a manager of four pools
            _get(client, server.origin + "/p")
        assert _ports(adapter) == {s.port for s in (servers[0], *servers[2:5])}  # 1 least recent
        _get(client, servers[1].origin + "/p")  # evicted: a new pool, as the manager makes
        assert _ports(adapter) == {s.port for s in servers[1:5]} and len(made) == 6
    assert [len(s.log) for s in servers] == [4, 4, 1, 1, 1]


def test_the_fleet_client_reads_a_url_s_host_once(serve, monkeypatch):
    server = serve(routes=_routes())
    hosts = _counting(monkeypatch, fleet_client, "host_of")
    gate = HostGate(HostTable(0.0), "site-1", lease=30)
    client = GatedHttpClient(HttpOptions(), gate, TimeLimit.starting_now(60))
    with client:
        for _ in range(3):
            _get(client, server.origin + "/p")
    assert len(hosts) == 1


def _chunked(handler) -> None:
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    handler.wfile.write(b"3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n")


def test_a_body_is_not_asked_again_once_its_length_is_read(serve, monkeypatch):
    routes = {**_routes(), "/chunked": _chunked}
    server = serve(routes=routes)
    reads = _counting(monkeypatch, urllib3.response.HTTPResponse, "read1")
    with HttpClient() as client:
        response = _get(client, server.origin + "/p")
        assert response.body.complete and response.body.bytes_read == len(b"<p>x</p>")
        assert len(reads) == 1  # its Content-Length read with the first
        response = client.get(server.origin + "/chunked")
        assert isinstance(response, Response)
        assert b"".join(response.body) == b"abcdefg" and response.body.complete
        assert len(reads) > 2  # chunks: read until urllib3 says there is no more


def test_a_page_named_twice_in_a_row_is_read_once(monkeypatch):
    import auditor.http.walls as walls

    made = _counting(monkeypatch, walls, "_Response")
    page = b"<html><title>Just a moment...</title>" + b"x" * 70_000
    headers = {"Server": "cloudflare"}
    first = walls.wall_of(403, headers, page[: walls.WALL_PROBE_BYTES])
    again = walls.wall_of(403, dict(headers), bytes(page[: walls.WALL_PROBE_BYTES]))
    assert first == again == walls.Wall("Cloudflare", "challenge", 403) and len(made) == 1
    assert walls.wall_of(403, headers, page) == first and len(made) == 1  # the same probe
    assert walls.wall_of(200, headers, page) == walls.Wall("Cloudflare", "challenge", 200)
    assert walls.wall_of(200, {"Server": "nginx"}, page) == walls.Wall(
        "Cloudflare", "challenge", 200
    )
    assert walls.wall_of(200, {"Server": "nginx"}, b"<p>hello</p>") is None
    assert walls.wall_of(True, {"Server": "nginx"}, b"<p>hello</p>") is None  # 1 == True
    assert len(made) == 5
