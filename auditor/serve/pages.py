"""The pages of ``auditor serve``: the fleet, a site, a site's report, and the chart of
verdicts over time. Server-rendered with Jinja2 (every value escaped), usable without
JavaScript: the filters are a form, the sort is a link on each column, and each page's
address holds all of it, so it can be pasted in a chat.

Touches: the database, the disk.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from auditor import __version__
from auditor.report.site import to_the_second
from auditor.scorer.result import VERDICTS
from auditor.serve.fleet import SORTS
from auditor.serve.params import BadParameter, fleet_query, query_string
from auditor.serve.reports import ReportMissing
from auditor.serve.state import ChartCache, served_of
from auditor.words import counted

if TYPE_CHECKING:
    from auditor.serve.fleet import FleetTable

__all__ = ["page_routes", "render_error"]

#: The fleet table's columns and their labels; a heading links to its sort where the
#: column is one of :data:`~auditor.serve.fleet.SORTS`.
COLUMNS = (
    ("site", "site"),
    ("verdict", "verdict"),
    ("since", "since (UTC)"),
    ("previous", "before"),
    ("runs", "runs"),
    ("last_run", "last run (UTC)"),
    ("due", "due (UTC)"),
    ("saved", "fetches a day saved"),
)
_NUMERIC = ("runs", "saved")


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("auditor.serve", "templates"),
        autoescape=select_autoescape(["html"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["second"] = to_the_second
    env.filters["minute"] = _to_the_minute
    env.filters["path"] = _path
    env.globals.update(counted=counted, version=__version__, pct=_pct)
    return env


def _to_the_minute(moment: datetime | None) -> str:
    """``2026-12-04 12:53``: an instant in UTC, as a table cell shows it."""
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _path(url: str) -> str:
    """A URL's path and query, as a table shows a sub-sitemap of the site on its page."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _html(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    values.setdefault("root", request.scope.get("root_path", ""))
    values.setdefault("now", datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat(" "))
    return HTMLResponse(_environment().get_template(template).render(**values), status_code=status)


def render_error(request: Request, status: int, title: str, why: str) -> HTMLResponse:
    """An error page: its status, what happened and why."""
    return _html(request, "error.html", status, code=status, title=title, why=why)


async def fleet_page(request: Request) -> Response:
    """``GET /``: the fleet, filtered, sorted and paginated as the address says."""
    try:
        query = fleet_query(request.query_params)
    except BadParameter as exc:
        return render_error(request, 400, "a filter is not right", str(exc))
    served = served_of(request)
    page = await run_in_threadpool(served.fleet.query, query)

    def link(**changes: Any) -> str:
        if "verdicts" in changes:
            changes = {"verdict": ",".join(changes.pop("verdicts")), "page": "", **changes}
        return query_string(query, **changes)

    return _html(
        request,
        "fleet.html",
        page=page,
        query=query,
        link=link,
        first=(page.page - 1) * page.per_page + 1,
        counts=[(v, page.counts[v]) for v in VERDICTS if page.counts.get(v)],
        fleet_total=sum(page.counts.values()),
        all_verdicts=VERDICTS,
        columns=COLUMNS,
        numeric=_NUMERIC,
        sortable=SORTS,
        chart=sum(page.counts.values()) > 0,
        version_tag=page.version,
    )


async def site_page(request: Request) -> Response:
    """``GET /sites/{slug}``: one site."""
    slug = request.path_params["slug"]
    detail = await run_in_threadpool(served_of(request).detail, slug)
    if detail is None:
        return render_error(request, 404, "no such site", f"The history holds no site {slug!r}.")
    return _html(
        request,
        "site.html",
        row=detail.row,
        segments=detail.segments,
        timeline=detail.timeline,
        plan_counts=sorted(detail.plan_counts.items(), key=lambda item: -item[1]),
        batches=detail.crawl_batches,
    )


async def report_file(request: Request) -> Response:
    """``GET /reports/{slug}/{name}``: a file of the site's report, drawn first if needed."""
    served = served_of(request)
    slug, name = request.path_params["slug"], request.path_params["name"]
    row = await run_in_threadpool(served.fleet.site, slug)
    if row is None or row.slug != slug:
        return render_error(request, 404, "no such report", f"The history holds no site {slug!r}.")
    try:
        path = await run_in_threadpool(served.reports.file, row.site, slug, name)
    except ReportMissing:
        return render_error(
            request, 404, "no such file", f"The report of {row.site} has no {name!r}."
        )
    return FileResponse(path, headers={"cache-control": "no-cache"})


async def report_folder(request: Request) -> Response:
    """``GET /reports/{slug}/``: the report's page."""
    return RedirectResponse(
        request.url_for("report", slug=request.path_params["slug"], name="index.html")
    )


async def to_fleet(request: Request) -> Response:
    """The reports' own link to "all sites" (``../index.html``) leads to the fleet page."""
    return RedirectResponse(request.url_for("fleet"))


async def verdicts_chart(request: Request) -> Response:
    """``GET /charts/verdicts.png``: verdict counts over time (kept until the history changes)."""
    served = served_of(request)
    png = await run_in_threadpool(_verdicts_png, served.fleet, served.charts)
    return Response(png, media_type="image/png", headers={"cache-control": "no-cache"})


def _verdicts_png(fleet: FleetTable, drawn: ChartCache) -> bytes:
    """The chart of the history as it is now: drawn once for each version of it."""
    version = fleet.version
    with drawn.lock:
        if drawn.version == version and drawn.png is not None:
            return drawn.png
    from auditor.serve.charts import draw_verdicts_over_time

    png = draw_verdicts_over_time(fleet.verdicts_over_time())
    with drawn.lock:
        drawn.version, drawn.png = version, png
    return png


def page_routes() -> list[Route]:
    """The pages' routes."""
    return [
        Route("/", fleet_page, methods=["GET"], name="fleet"),
        Route("/index.html", to_fleet, methods=["GET"]),
        Route("/sites/{slug}", site_page, methods=["GET"], name="site"),
        Route("/reports/index.html", to_fleet, methods=["GET"]),
        Route("/reports/{slug}/", report_folder, methods=["GET"]),
        Route("/reports/{slug}/{name}", report_file, methods=["GET"], name="report"),
        Route("/charts/verdicts.png", verdicts_chart, methods=["GET"]),
    ]
