"""``auditor serve``'s pages and API against a live server on loopback, on SQLite and on
PostgreSQL (read through a role that may only read): every page and route, filters,
sorting and pages, a report drawn on first open then kept, path traversal refused,
hostile values escaped, oversized requests refused."""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest
from markupsafe import escape

from auditor.report.site import site_slug
from auditor.schemas import validate
from auditor.serve.app import create_app
from auditor.serve.state import ServeConfig
from tests.serve.conftest import HOSTILE, Audited
from tests.serve.live import serving


@pytest.fixture(scope="module")
def server(history_url: str, tmp_path_factory: pytest.TempPathFactory):
    """(base URL, reports folder, the app) of a server of the audited history."""
    reports = tmp_path_factory.mktemp("reports")
    app = create_app(ServeConfig(db=history_url, reports=reports))
    with serving(app) as base:
        yield base, reports, app


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server[0], timeout=60) as client:
        yield client


def _sites(client: httpx.Client, **params: object) -> dict:
    answer = client.get("/api/v1/sites", params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_fleet_page_lists_every_site_with_a_link_to_its_page(client, audited: Audited):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for origin in [*audited.origins.values(), audited.hostile]:
        assert f'href="/sites/{site_slug(origin)}">{origin}</a>' in page.text
    assert 'src="/charts/verdicts.png?v=' in page.text
    chart = client.get("/charts/verdicts.png")
    assert chart.headers["content-type"] == "image/png" and chart.content[:4] == b"\x89PNG"


def test_every_site_row_follows_the_schema_and_counts_add_up(client, audited: Audited):
    answer = _sites(client, per_page=500)
    assert answer["total"] == len(audited.origins) + 1 == len(answer["sites"])
    for row in answer["sites"]:
        validate("site-row", row)
        assert row["runs"] == 2
    assert sum(answer["counts"].values()) == answer["total"]
    by_site = {row["site"]: row for row in answer["sites"]}
    frozen = by_site[audited.origins["frozen"]]
    assert (frozen["verdict"], frozen["previous"], frozen["degraded"]) == (
        "untrusted",
        "trusted",
        True,
    )


def test_filters_narrow_the_fleet_on_the_server(client, audited: Audited):
    everyone = _sites(client, per_page=500)
    for verdict, count in everyone["counts"].items():
        only = _sites(client, verdict=verdict, per_page=500)
        assert only["total"] == count and {r["verdict"] for r in only["sites"]} == {verdict}
        assert only["counts"] == everyone["counts"]  # the whole fleet's, always
    degraded = _sites(client, degraded=1)
    assert {r["site"] for r in degraded["sites"]} == {
        r["site"] for r in everyone["sites"] if r["degraded"]
    }
    port = audited.origins["mixed"].rsplit(":", 1)[1]
    assert [r["site"] for r in _sites(client, host=f":{port}")["sites"]] == [
        audited.origins["mixed"]
    ]
    assert _sites(client, host="no-such-host")["total"] == 0
    later = max(r["since"] for r in everyone["sites"])
    recent = _sites(client, changed_since=later)
    assert recent["total"] >= 1 and all(r["since"] >= later for r in recent["sites"])


@pytest.mark.parametrize("column", ["site", "since", "last_run", "due", "runs"])
def test_sorting_and_pages_are_one_order(client, column):
    ascending = [r["site"] for r in _sites(client, sort=column, per_page=500)["sites"]]
    rows = _sites(client, sort=column, per_page=500)["sites"]
    keys = [r[column] for r in rows]
    assert keys == sorted(keys)
    descending = [r[column] for r in _sites(client, sort=f"-{column}", per_page=500)["sites"]]
    assert descending == sorted(keys, reverse=True)
    paged = []
    for number in range(1, 5):
        page = _sites(client, sort=column, per_page=3, page=number)
        assert page["pages"] == 4 and page["page"] == number
        paged += [r["site"] for r in page["sites"]]
    assert paged == ascending
    beyond = _sites(client, sort=column, per_page=3, page=9)
    assert beyond["sites"] == [] and beyond["total"] == len(ascending)


def test_pagination_links_hold_the_filters(client):
    first = _sites(client, per_page=4, sort="-site")
    assert first["previous"] is None
    second = client.get(first["next"]).json()
    assert second["page"] == 2 and second["previous"] is not None
    assert "sort=-site" in first["next"] and "per_page=4" in first["next"]
    page = client.get("/", params={"per_page": 4, "sort": "-site"}).text
    assert 'href="?sort=-site&amp;page=2&amp;per_page=4" rel="next"' in page


@pytest.mark.parametrize(
    "query",
    ["sort=nope", "page=0", "page=x", "per_page=501", "verdict=great", "degraded=maybe",
     "changed_since=yesterday", "host=" + "h" * 300, "page=1&page=2"],
)  # fmt: skip
def test_a_wrong_parameter_is_a_400_that_says_which(client, query):
    api = client.get(f"/api/v1/sites?{query}")
    assert api.status_code == 400
    name = query.split("=", 1)[0]
    assert api.json()["error"].startswith(f"{name}:")
    page = client.get(f"/?{query}")
    assert page.status_code == 400 and f"{name}:" in page.text


def test_a_site_page_shows_its_segments_plan_and_runs(client, audited: Audited):
    slug = site_slug(audited.origins["mixed"])
    page = client.get(f"/sites/{slug}")
    assert page.status_code == 200
    text = page.text
    assert "/sitemap-blog.xml" in text and "/sitemap-products.xml" in text
    segments = client.get(f"/api/v1/sites/{slug}/segments").json()["segments"]
    verdicts = {
        s["sitemap"].rsplit("/", 1)[1]: s["verdict"] for s in segments if not s["group_pattern"]
    }
    assert verdicts["sitemap-blog.xml"] == "trusted"
    assert verdicts["sitemap-products.xml"] != "trusted"
    runs = client.get(f"/api/v1/sites/{slug}/runs").json()["runs"]
    assert len(runs) == 2 and runs[0]["started_at"] < runs[1]["started_at"]
    assert f'href="/reports/{slug}/index.html"' in text
    assert 'id="plan"' in text or "Nothing is due today." in text


def test_the_plan_is_the_plan_commands_lines(client, audited: Audited):
    slug = site_slug(audited.origins["mixed"])
    answer = client.get(f"/api/v1/sites/{slug}/plan")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert lines, "the mixed site plans fetches"
    for line in lines:
        validate("plan-line", line)
        assert line["site"] == audited.origins["mixed"]


def test_a_report_is_drawn_on_first_open_then_kept(server, client, audited: Audited):
    _, reports, app = server
    slug = site_slug(audited.origins["accurate-jsonld"])
    drawn = app.state.served.reports.drawn
    first = client.get(f"/reports/{slug}/index.html")
    assert first.status_code == 200
    assert f"<title>auditor report: {audited.origins['accurate-jsonld']}</title>" in first.text
    assert app.state.served.reports.drawn == drawn + 1
    assert (reports / slug / "index.html").is_file()
    again = client.get(f"/reports/{slug}/", follow_redirects=True)
    assert again.status_code == 200 and again.text == first.text
    images = re.findall(r'<img src="([^"]+)"', first.text)
    assert images
    for name in images:
        image = client.get(f"/reports/{slug}/{name}")
        assert image.status_code == 200 and image.content[:4] == b"\x89PNG"
    assert app.state.served.reports.drawn == drawn + 1  # kept: not drawn again
    assert client.get(f"/reports/{slug}/../index.html", follow_redirects=True).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/reports/{slug}/..%2F..%2Fhistory.sqlite3",
        "/reports/{slug}/%2e%2e%2Fhistory.sqlite3",
        "/reports/..%2F..%2Fetc/passwd",
        "/reports/{slug}/.drawn-run",
        "/reports/{slug}/..",
        "/reports/%2e%2e/index.html",
        "/static/..%2F..%2F__init__.py",
        "/static/site.html",
    ],
)
def test_no_file_outside_the_reports_is_served(client, audited: Audited, path):
    answer = client.get(path.format(slug=site_slug(audited.origins["frozen"])))
    assert answer.status_code == 404
    assert "SQLite format" not in answer.text and "root:" not in answer.text


def test_an_unknown_site_is_a_404_page_and_a_json_404(client):
    assert client.get("/sites/no.such.site").status_code == 404
    answer = client.get("/api/v1/sites/no.such.site/runs")
    assert answer.status_code == 404 and "no site" in answer.json()["error"]
    assert client.get("/api/v1/nothing").json()["status"] == 404


def test_the_trust_look_up_answers_per_segment(client, audited: Audited):
    mixed = audited.origins["mixed"]
    blog = client.get("/api/v1/trust", params={"url": f"{mixed}/blog/"}).json()
    validate("trust-answer", blog)
    segments = client.get(f"/api/v1/sites/{site_slug(mixed)}/segments").json()["segments"]
    assert blog["site"] == mixed
    unknown = client.get("/api/v1/trust", params={"url": "https://unknown.example/a"}).json()
    validate("trust-answer", unknown)
    assert unknown["site"] is None and unknown["schedule_on_lastmod"] is False
    assert segments


def test_a_batch_look_up_keeps_the_order_and_is_bounded(client, audited: Audited):
    urls = [f"{origin}/" for origin in audited.origins.values()] + ["https://x.example/"]
    answer = client.post("/api/v1/trust", json={"urls": urls})
    assert answer.status_code == 200
    assert [a["url"] for a in answer.json()["answers"]] == urls
    too_many = client.post("/api/v1/trust", json={"urls": ["https://x.example/"] * 1001})
    assert too_many.status_code == 413
    for body in (b"not json", b'{"urls": "https://x.example/"}', b"[1, 2]", b'{"urls": [1]}'):
        assert client.post("/api/v1/trust", content=body).status_code == 400
    assert client.get("/api/v1/trust").status_code == 400
    assert client.get("/api/v1/trust", params={"url": "h" * 5000}).status_code == 400


def test_hostile_values_are_escaped_in_pages_and_json(client, audited: Audited):
    probe = '<script>alert("q")</script>'
    page = client.get("/", params={"host": probe})
    assert page.status_code == 200 and "<script" not in page.text.lower()
    assert str(escape(probe)) in page.text  # shown back in the filter, as text
    slug = site_slug(audited.hostile)
    for path in (f"/sites/{slug}", f"/reports/{slug}/index.html"):
        answer = client.get(path)
        assert answer.status_code == 200 and "<script" not in answer.text.lower()
    url = audited.hostile + HOSTILE
    answer = client.get("/api/v1/trust", params={"url": url})
    assert answer.status_code == 200 and answer.json()["url"] == url
    assert answer.json()["listed"] is True


def test_the_openapi_document_names_every_route(client):
    document = client.get("/api/v1/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) >= {
        "/api/v1/sites",
        "/api/v1/sites/{slug}",
        "/api/v1/sites/{slug}/runs",
        "/api/v1/sites/{slug}/segments",
        "/api/v1/sites/{slug}/plan",
        "/api/v1/trust",
        "/healthz",
    }
    assert client.get("/healthz").json()["status"] == "ok"


def test_a_kept_report_is_drawn_again_after_the_sites_next_run(tmp_path):
    from auditor.audit import AuditOptions, audit_site
    from auditor.demo import demo_sites
    from auditor.demo.server import SiteServer
    from auditor.history import History
    from auditor.sampler import SampleOptions

    database = tmp_path / "history.sqlite3"
    site = demo_sites()["frozen"]
    options = AuditOptions(sample=SampleOptions(sample=20, delay=0.0), seed=1)
    with SiteServer(site) as origin_server:
        origin = origin_server.origin
        with History.open(database) as history:
            audit_site(origin, history, options)
        slug = site_slug(origin)
        app = create_app(ServeConfig(db=str(database), reports=tmp_path / "reports"))
        with serving(app) as base, httpx.Client(base_url=base, timeout=60) as client:
            first = client.get(f"/reports/{slug}/index.html").text
            assert client.get(f"/reports/{slug}/index.html").text == first
            assert app.state.served.reports.drawn == 1
            site.tick()
            with History.open(database) as history:  # a run saved meanwhile, as by a fleet
                audit_site(origin, history, options)
            time.sleep(1.1)  # the table looks for new runs once a second
            after = client.get(f"/reports/{slug}/index.html")
            assert after.status_code == 200 and app.state.served.reports.drawn == 2
            assert after.text != first
            row = client.get(f"/api/v1/sites/{slug}").json()
            assert row["runs"] == 2


def test_a_hostile_origin_is_text_in_every_page(tmp_path):
    from tests.report.fleet_history import HOSTILE as HOSTILE_ORIGIN
    from tests.report.fleet_history import write_fleet_history

    database = tmp_path / "history.sqlite3"
    write_fleet_history(database, 40)
    app = create_app(ServeConfig(db=str(database), reports=tmp_path / "reports"))
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as client:
        page = client.get("/", params={"per_page": 500}).text
        assert "<script" not in page.lower()
        assert str(escape(HOSTILE_ORIGIN)) in page
        sites = client.get("/api/v1/sites", params={"host": "evil"}).json()["sites"]
        assert [row["site"] for row in sites] == [HOSTILE_ORIGIN]
        site_page = client.get(f"/sites/{sites[0]['slug']}").text
        assert "<script" not in site_page.lower()


def test_behind_a_reverse_proxy_every_link_carries_the_prefix(audited: Audited, tmp_path):
    """``--root-path /auditor``: the proxy strips the prefix; pages link through it."""
    from tests.serve.guardtoken import TOKEN

    config = ServeConfig(db=str(audited.database), reports=tmp_path / "r", token=TOKEN)
    app = create_app(config)
    with serving(app, root_path="/auditor") as base, httpx.Client(base_url=base) as client:
        first = client.get("/", params={"token": TOKEN})  # a browser's first visit
        assert first.status_code == 303 and first.headers["location"] == "/auditor/"
        page = client.get("/").text  # the cookie kept
        slug = site_slug(audited.origins["mixed"])
        assert f'href="/auditor/sites/{slug}"' in page
        assert 'href="/auditor/static/style.css"' in page
        assert 'src="/auditor/charts/verdicts.png' in page
        site = client.get(f"/sites/{slug}").text
        assert f'href="/auditor/reports/{slug}/index.html"' in site
        document = client.get("/api/v1/openapi.json").json()
        assert document["servers"] == [{"url": "/auditor"}]


def test_every_column_heading_that_links_sorts(client):
    page = client.get("/").text
    head = page.split("<thead>", 1)[1].split("</thead>", 1)[0]
    links = re.findall(r'href="(\?[^"]*)"', head)
    assert len(links) == 7  # every column but "before", which has no order of its own
    for link in links:
        assert client.get("/" + link.replace("&amp;", "&")).status_code == 200, link
