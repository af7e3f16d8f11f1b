"""The JSON API of ``auditor serve``, under ``/api/v1``: the fleet's sites (the fleet page's
filters, sort and pages), one site, its runs, its segments, its plan, and the trust
look-up. Its OpenAPI document is :mod:`auditor.serve.openapi`'s, at
``/api/v1/openapi.json``.

Every answer is JSON (the plan: JSON lines, as ``auditor plan --format jsonl``); every
refusal is JSON too, ``{"error": ..., "status": ...}``, with a 4xx that says which: 400 a
parameter, 404 a site the history does not hold, 413 a body or batch too large.

Touches: the database.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from auditor.serve.guard import MAX_BODY, BodyTooLarge
from auditor.serve.params import BadParameter, fleet_query, query_string
from auditor.serve.state import served_of
from auditor.serve.views import run_json, segment_json, site_json

__all__ = ["API_PREFIX", "MAX_BATCH", "MAX_URL", "api_routes", "refusal"]

#: URLs one batch look-up takes at most: 1,000 answers are about 400 kB of JSON.
MAX_BATCH = 1_000
#: Longest URL looked up: longer than any a sitemap may list (2,048, the protocol's limit).
MAX_URL = 4_096
#: Where the API's routes are mounted.
API_PREFIX = "/api/v1"
#: What a plan is sent as: one JSON object a line.
JSON_LINES = "application/x-ndjson"


def refusal(status: int, why: str) -> JSONResponse:
    """A JSON refusal: ``{"error": why, "status": status}``."""
    return JSONResponse({"error": why, "status": status}, status_code=status)


async def sites(request: Request) -> Response:
    """``GET /api/v1/sites``: a page of the fleet."""
    try:
        query = fleet_query(request.query_params)
    except BadParameter as exc:
        return refusal(400, str(exc))
    page = await run_in_threadpool(served_of(request).fleet.query, query)
    base = str(request.url.replace(query=""))

    def link(number: int) -> str | None:
        if not 1 <= number <= page.pages or number == page.page:
            return None
        return f"{base}?{query_string(query, page=number)}"

    return JSONResponse(
        {
            "sites": [site_json(row) for row in page.rows],
            "total": page.total,
            "page": page.page,
            "per_page": page.per_page,
            "pages": page.pages,
            "counts": page.counts,
            "next": link(page.page + 1),
            "previous": link(page.page - 1),
        }
    )


async def one_site(request: Request) -> Response:
    """``GET /api/v1/sites/{slug}``: a site's row of the fleet, and where the rest is."""
    row = await run_in_threadpool(served_of(request).fleet.site, request.path_params["slug"])
    if row is None:
        return _unknown(request)
    base = str(request.url)
    return JSONResponse(
        {
            **site_json(row),
            "links": {
                "runs": f"{base}/runs",
                "segments": f"{base}/segments",
                "plan": f"{base}/plan",
                "report": str(request.url_for("report", slug=row.slug, name="index.html")),
            },
        }
    )


async def runs(request: Request) -> Response:
    """``GET /api/v1/sites/{slug}/runs``: every run of the site, oldest first."""
    detail = await run_in_threadpool(served_of(request).detail, request.path_params["slug"])
    if detail is None:
        return _unknown(request)
    return JSONResponse({"site": detail.row.site, "runs": [run_json(r) for r in detail.timeline]})


async def segments(request: Request) -> Response:
    """``GET /api/v1/sites/{slug}/segments``: the latest run's segments and groups."""
    detail = await run_in_threadpool(served_of(request).detail, request.path_params["slug"])
    if detail is None:
        return _unknown(request)
    listed = [segment_json(segment) for segment in detail.segments]
    return JSONResponse({"site": detail.row.site, "segments": listed})


async def plan(request: Request) -> Response:
    """``GET /api/v1/sites/{slug}/plan``: today's plan of the site, JSON lines."""
    served = served_of(request)
    row = await run_in_threadpool(served.fleet.site, request.path_params["slug"])
    if row is None:
        return _unknown(request)
    lines: Iterator[str] = served.plan_lines(row.site)
    return StreamingResponse(_newlines(iterate_in_threadpool(lines)), media_type=JSON_LINES)


async def _newlines(lines: AsyncIterator[str]) -> AsyncIterator[bytes]:
    async for line in lines:
        yield (line + "\n").encode()


async def trust_one(request: Request) -> Response:
    """``GET /api/v1/trust?url=URL``: may a crawler schedule this URL on its lastmod?"""
    urls = request.query_params.getlist("url")
    if len(urls) != 1:
        return refusal(400, "url: give exactly one (the batch form is POST /api/v1/trust)")
    if len(urls[0]) > MAX_URL:
        return refusal(400, f"url: longer than {MAX_URL} characters")
    trust = served_of(request).trust
    try:  # a site already kept is answered here, without a thread's hop
        answer = trust.peek(urls[0])
        if answer is None:
            answer = await run_in_threadpool(trust.look_up, urls[0])
    except ValueError as exc:
        return refusal(400, f"url: {exc}")
    return JSONResponse(answer.to_dict())


async def trust_many(request: Request) -> Response:
    """``POST /api/v1/trust`` with ``{"urls": [...]}``: the answers, in the same order."""
    try:
        body = await request.body()
    except BodyTooLarge:
        return refusal(413, f"request body over {MAX_BODY} bytes")
    urls = _batch(body)
    if isinstance(urls, Response):
        return urls
    try:
        answers = await run_in_threadpool(served_of(request).trust.look_up_many, urls)
    except ValueError as exc:
        return refusal(400, f"urls: {exc}")
    return JSONResponse({"answers": [answer.to_dict() for answer in answers]})


def _batch(body: bytes) -> list[str] | Response:
    """The batch's URLs, or the refusal saying what is wrong with the body."""
    try:
        decoded: Any = json.loads(body)
    except ValueError:
        return refusal(400, 'body: not JSON (send {"urls": ["https://...", ...]})')
    urls = decoded.get("urls") if isinstance(decoded, dict) else None
    if not isinstance(urls, list) or not all(isinstance(url, str) for url in urls):
        return refusal(400, 'body: {"urls": [...]} with a list of URL strings is expected')
    if len(urls) > MAX_BATCH:
        return refusal(413, f"urls: {len(urls)} in one batch, at most {MAX_BATCH}")
    too_long = next((i for i, url in enumerate(urls) if len(url) > MAX_URL), None)
    if too_long is not None:
        return refusal(400, f"urls[{too_long}]: longer than {MAX_URL} characters")
    return list(urls)


async def openapi(request: Request) -> Response:
    """``GET /api/v1/openapi.json``: the API's OpenAPI document."""
    from auditor.serve.openapi import openapi_document

    mounted = str(request.scope.get("root_path", ""))  # the prefix, then /api/v1
    return JSONResponse(openapi_document(root=mounted.removesuffix(API_PREFIX)))


def _unknown(request: Request) -> Response:
    return refusal(404, f"no site {request.path_params['slug']!r} in the history")


def api_routes() -> list[Route]:
    """The API's routes, to mount under ``/api/v1``."""
    return [
        Route("/sites", sites, methods=["GET"]),
        Route("/sites/{slug}", one_site, methods=["GET"]),
        Route("/sites/{slug}/runs", runs, methods=["GET"]),
        Route("/sites/{slug}/segments", segments, methods=["GET"]),
        Route("/sites/{slug}/plan", plan, methods=["GET"]),
        Route("/trust", trust_one, methods=["GET"]),
        Route("/trust", trust_many, methods=["POST"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
