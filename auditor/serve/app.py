"""The ASGI application of ``auditor serve``: the pages (:mod:`~auditor.serve.pages`), the
JSON API under ``/api/v1`` (:mod:`~auditor.serve.api`), the stylesheets, the health
check, and the guard (:mod:`~auditor.serve.guard`) in front of them all.

:func:`create_app` makes it; uvicorn (or any ASGI server) serves it. The history is
opened read-only when the application starts (its lifespan) and closed when it stops.
A refusal is JSON under ``/api/`` and a page elsewhere; an error inside a route is logged
with its traceback and answered 500 without one.

Touches: the database, the disk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from auditor.history.location import locate
from auditor.serve.api import API_PREFIX, api_routes, refusal
from auditor.serve.fleet import FleetQuery
from auditor.serve.guard import HEALTH_PATH, Guard
from auditor.serve.pages import page_routes, render_error
from auditor.serve.state import served_of

if TYPE_CHECKING:
    from auditor.serve.state import ServeConfig, Served

__all__ = ["create_app"]

log = logging.getLogger(__name__)
access_log = logging.getLogger("auditor.serve.access")

#: The stylesheets served, and where each is read from: the reports' own, and the pages'.
_STYLES = {"style.css": "auditor.report", "serve.css": "auditor.serve"}


def create_app(config: ServeConfig, served: Served | None = None) -> Starlette:
    """The application serving the history ``config.db`` as ``config`` says; ``served``:
    its state already opened (else opened when the application starts). Either way it is
    closed when the application stops."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        from auditor.serve.state import Served

        nonlocal served
        if served is None:
            served = await run_in_threadpool(Served.start, config)
        app.state.served = served
        log.info("serving the history %s", locate(config.db))
        try:
            yield
        finally:
            await run_in_threadpool(served.close)

    routes = [
        *page_routes(),
        Mount(API_PREFIX, routes=api_routes()),
        Route("/static/{name}", _stylesheet, methods=["GET"]),
        Route(HEALTH_PATH, _health, methods=["GET"]),
        Route("/favicon.ico", _no_icon, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(AccessLog), Middleware(Guard, token=config.token)],
        exception_handlers={HTTPException: _refused, Exception: _failed},
        lifespan=lifespan,
    )


class AccessLog:
    """ASGI middleware: each request logged at INFO (``-v``) when answered: its method,
    path (never its query, which may hold a token or a URL looked up), status and time."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not access_log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), [0]

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            took = (time.perf_counter() - started) * 1000
            access_log.info("%s %s -> %d, %.1f ms", scope["method"], scope["path"], status[0], took)


async def _stylesheet(request: Request) -> Response:
    package = _STYLES.get(request.path_params["name"])
    if package is None:
        return await _refused(request, HTTPException(404))
    text = resources.files(package).joinpath("templates", request.path_params["name"]).read_text()
    return Response(text, media_type="text/css", headers={"cache-control": "max-age=3600"})


async def _no_icon(request: Request) -> Response:
    """``GET /favicon.ico``: none (204), so a browser opening a report asks once, quietly."""
    return Response(status_code=204, headers={"cache-control": "max-age=86400"})


async def _health(request: Request) -> Response:
    """``GET /healthz``: 200 while the history answers (no token asked)."""
    served = served_of(request)
    try:
        page = await run_in_threadpool(served.fleet.query, FleetQuery(per_page=1))
    except Exception as exc:
        return JSONResponse({"status": "failing", "error": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ok", "sites": sum(page.counts.values())})


async def _refused(request: Request, exc: Exception) -> Response:
    """404, 405 and the like: JSON under /api/, a page elsewhere."""
    assert isinstance(exc, HTTPException)
    if request.url.path.startswith("/api/"):
        return refusal(exc.status_code, exc.detail)
    return render_error(request, exc.status_code, exc.detail, f"{request.url.path} is not here.")


async def _failed(request: Request, exc: Exception) -> Response:
    """An error inside a route: logged with its traceback, answered 500 without."""
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    if request.url.path.startswith("/api/"):
        return refusal(500, "the server failed on this request (its log says why)")
    return render_error(request, 500, "the server failed", "Its log says why.")
