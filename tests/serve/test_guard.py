"""The guard in front of every route: the token rule and the bounds on a request, against
a live server on loopback (uvicorn in a thread) serving a small application behind it."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from auditor.serve.guard import COOKIE, MAX_BODY, MAX_TARGET, BodyTooLarge, Guard, is_loopback
from tests.serve.live import serving

TOKEN = "s3cret-token-0123456789abcdef"


async def _echo(request: Request) -> PlainTextResponse:
    try:
        body = await request.body()
    except BodyTooLarge:
        return PlainTextResponse("too large", status_code=413)
    return PlainTextResponse(f"{request.method} {request.url.path} {len(body)}")


async def _health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def _app(token: str | None) -> Starlette:
    routes = [
        Route("/healthz", _health),
        Route("/{path:path}", _echo, methods=["GET", "POST"]),
    ]
    return Starlette(routes=routes, middleware=[Middleware(Guard, token=token)])


@pytest.fixture(scope="module")
def guarded():
    with serving(_app(TOKEN)) as base:
        yield base


def test_without_the_token_every_request_is_refused_but_the_health_check(guarded):
    with httpx.Client(base_url=guarded) as client:
        for path in ("/", "/sites/x", "/api/v1/sites", "/reports/a/index.html"):
            answer = client.get(path)
            assert answer.status_code == 401, path
            assert answer.json()["status"] == 401
            assert answer.headers["www-authenticate"].startswith("Bearer")
        assert client.get("/healthz").status_code == 200


def test_a_wrong_token_is_refused_and_the_right_one_let_through(guarded):
    with httpx.Client(base_url=guarded) as client:
        wrong = {"authorization": "Bearer " + TOKEN[:-1] + "x"}
        assert client.get("/api/v1/sites", headers=wrong).status_code == 401
        assert client.get("/", headers={"authorization": TOKEN}).status_code == 401  # no scheme
        right = client.get("/api/v1/sites", headers={"authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200
        assert right.text == "GET /api/v1/sites 0"


def test_a_browser_opens_a_page_with_the_token_once_and_keeps_it_in_a_cookie(guarded):
    with httpx.Client(base_url=guarded, follow_redirects=False) as client:
        first = client.get("/sites/example.com", params={"token": TOKEN, "sort": "-since"})
        assert first.status_code == 303
        assert first.headers["location"] == "/sites/example.com?sort=-since"  # no token left
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        after = client.get("/sites/example.com?sort=-since")  # the cookie is sent back
        assert after.status_code == 200
    with httpx.Client(base_url=guarded, follow_redirects=False) as client:
        assert client.get("/", params={"token": "not-it"}).status_code == 401
        assert client.get("/", headers={"cookie": f"{COOKIE}=not-it"}).status_code == 401


def test_an_open_server_asks_nothing():
    with serving(_app(None)) as base, httpx.Client(base_url=base) as client:
        assert client.get("/anything").status_code == 200


def test_an_overlong_target_or_body_is_refused_with_a_4xx(guarded):
    bearer = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=guarded, headers=bearer) as client:
        long = client.get("/api/v1/trust", params={"url": "https://a.example/" + "x" * MAX_TARGET})
        assert long.status_code == 414
        announced = client.post("/api/v1/trust", content=b"x" * (MAX_BODY + 1))
        assert announced.status_code == 413

        def chunks():  # no Content-Length: the body is stopped as it passes the bound
            for _ in range(MAX_BODY // 65536 + 2):
                yield b"y" * 65536

        streamed = client.post("/api/v1/trust", content=chunks())
        assert streamed.status_code == 413
        within = client.post("/api/v1/trust", content=b"z" * 1000)
        assert within.text == "POST /api/v1/trust 1000"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.3.2.1", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("0.0.0.0", False), ("::", False), ("10.0.0.5", False),
     ("example.com", False)],
)  # fmt: skip
def test_which_binds_stay_on_this_machine(host, loopback):
    assert is_loopback(host) is loopback
